package statuspage

// TEMPORARY stand-ins for the renderers being written beside this.

type Options struct{ Base string }

func RenderPage(p Page, o Options) ([]byte, error)                  { panic("stub") }
func RenderHistory(h History, o Options) ([]byte, error)            { panic("stub") }
func RenderPassword(p Page, o Options, failed bool) ([]byte, error) { panic("stub") }
func SummaryJSON(p Page, url string) ([]byte, error)                { panic("stub") }
func Feed(p Page, incs []Incident, url string) ([]byte, error)      { panic("stub") }
func StateBadge(c Component) []byte                                 { panic("stub") }
func UptimeBadge(c Component, window string) []byte                 { panic("stub") }
func Stylesheet() []byte                                            { return nil }
func StylesheetName() string                                        { panic("stub") }
func Theme(accent string) []byte                                    { panic("stub") }
func ThemeName(accent string) string                                { panic("stub") }
