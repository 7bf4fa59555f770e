package console_test

import "github.com/tocsin/tocsin/internal/web/console"

func statusPageEditor() console.StatusPageEditor {
	return console.StatusPageEditor{Shell: shell(console.NavStatusPages), ID: "sp_01JDQ7A", Slug: "acme", CustomDomain: "status.acme.example",
		DNSTarget: "tocsin.acme.example", DNSType: "CNAME", PasswordStored: true, Version: "abc",
		Settings: console.StatusPageSettings{Title: "Acme <status>", Slug: "acme", Description: "Our services", CustomDomain: "status.acme.example",
			ShowUptime: true, ShowIncidents: true},
		Groups: []console.EditorGroup{
			{Index: 0, Name: "Europe", First: true, Components: []console.EditorComponent{
				{ID: "spc_01A", Name: "Website", Subject: "monitor Website", First: true},
				{ID: "spc_01B", Name: "Checkout <API>", Subject: "monitor Checkout API <v2>"}}},
			{Index: 1, Last: true, Components: []console.EditorComponent{{ID: "spc_01C", Name: "Backups", Subject: "heartbeat Nightly", Last: true}}},
		},
		Subjects:  []console.SubjectChoice{{Value: "monitor:mon_01JDQ6C", Label: "Monitor: Postgres primary"}},
		AddName:   "x\u00a0",
		AddErrors: console.FormErrors{Fields: map[string]string{"c-name": "must not be blank: it is the component's public name"}},
	}
}

func statusPagePages() []uiPage {
	return []uiPage{
		{"status-pages", "/w/ws_01JDQ4K8Z6/status-pages", "Status pages", func() ([]byte, error) {
			return console.Render(console.StatusPages{Shell: shell(console.NavStatusPages), Rows: []console.StatusPageRow{
				{ID: "sp_01JDQ7A", Title: "Acme <status>", Slug: "acme", CustomDomain: "status.acme.example", Components: 3},
				{ID: "sp_01JDQ7B", Title: "Internal", Slug: "internal", Protected: true}},
				Slug: "Bad slug", Errors: console.FormErrors{Fields: map[string]string{"slug": "must be 2 to 63 lower-case letters"}}})
		}, []string{`href="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A"`, `href="/status/acme"`, "Acme &lt;status&gt;", "status.acme.example",
			`action="/w/ws_01JDQ4K8Z6/status-pages"`, `value="Bad slug"`, `id="err-slug"`, `aria-current="page">Status pages</a>`, ">password</span>"}},
		{"status-pages-viewer", "/w/ws_01JDQ4K8Z6/status-pages/empty", "Status pages", func() ([]byte, error) {
			return console.Render(console.StatusPages{Shell: viewer(console.NavStatusPages)})
		}, []string{"No status pages yet", "may look but not create"}},
		{"status-page-editor", "/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A", "Acme <status>", func() ([]byte, error) {
			return console.Render(statusPageEditor())
		}, []string{`action="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A"`, `name="password" type="password"`, "status.acme.example. CNAME tocsin.acme.example.",
			`action="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A/components/spc_01B/move"`, `name="dir" value="up"`, `name="dir" value="down"`,
			`action="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A/unpublish"`, `src="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A/preview?v=abc"`,
			"Checkout &lt;API&gt;", `id="err-c-name"`, `<option value="monitor:mon_01JDQ6C"`, `action="/w/ws_01JDQ4K8Z6/status-pages/sp_01JDQ7A/groups/1/move"`,
			`enctype="multipart/form-data"`, `name="logo" type="file"`, "No logo"}},
	}
}
