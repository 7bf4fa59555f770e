package webui

import (
	"bytes"
	"fmt"
	"html/template"
)

// channelPages are the channel pages' templates: each page with the
// layout and the parts they share (the form, a delivery's attempts).
var channelPages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"channels.html", "channel.html", "channel_form.html", "channel_secret.html"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).Funcs(monitorFuncs).
			ParseFS(files, "templates/layout.html", "templates/channel_parts.html", "templates/"+name))
	}
	return out
}()

func executeChannel(name string, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := channelPages[name].ExecuteTemplate(&b, "page", v); err != nil {
		return nil, fmt.Errorf("webui: render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// RenderChannels renders GET /w/{ws}/channels.
func RenderChannels(v Channels) ([]byte, error) { return executeChannel("channels.html", v) }

// RenderChannelForm renders the new channel's form (or the choice of
// kinds).
func RenderChannelForm(v ChannelForm) ([]byte, error) { return executeChannel("channel_form.html", v) }

// RenderChannel renders GET /w/{ws}/channels/{id}.
func RenderChannel(v ChannelDetail) ([]byte, error) {
	v.Form.Shell = v.Shell
	return executeChannel("channel.html", v)
}

// RenderChannelSecret renders a webhook channel's signing secret, once.
func RenderChannelSecret(v ChannelSecret) ([]byte, error) {
	return executeChannel("channel_secret.html", v)
}
