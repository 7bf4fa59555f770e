package console

// RenderChannels renders GET /w/{ws}/channels.
func RenderChannels(v Channels) ([]byte, error) { return execute("channels.html", v) }

// RenderChannelForm renders the new channel's form (or the choice of
// kinds).
func RenderChannelForm(v ChannelForm) ([]byte, error) { return execute("channel_form.html", v) }

// RenderChannel renders GET /w/{ws}/channels/{id}.
func RenderChannel(v ChannelDetail) ([]byte, error) {
	v.Form.Shell = v.Shell
	return execute("channel.html", v)
}

// RenderChannelSecret renders a webhook channel's signing secret, once.
func RenderChannelSecret(v ChannelSecret) ([]byte, error) {
	return execute("channel_secret.html", v)
}
