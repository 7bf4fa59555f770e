// Package console is Tocsin's signed-in web app: server-rendered pages
// over the same app functions as the API. A signed-in browser carries a
// session token in a cookie; every page that acts in a workspace builds
// its app.Actor with app.WebActor, so the browser can do exactly what the
// person's role allows, checked by the same Require as an API key's
// request. Every state change is a POST form, refused when it comes from
// another site (http.CrossOriginProtection: the browser's Sec-Fetch-Site,
// or Origin against Host). It reaches the database only through app.
//
// A page is a line of the route table (routes.go), one Go file holding
// its handlers and its view model, and one template (templates/, parsed
// with layout.html and the partials, parts.html and *_parts.html).
// Handlers return an error; one error writer (error.go) turns it into the
// error page. The view models read no clock, request or database; times
// are shown in UTC ("2026-11-26 09:14 UTC"), and a zero time means "never"
// or "not yet" wherever a field says so.
//
// The markup is built for a strict Content-Security-Policy (CSP): no
// inline script, no inline style, no style or event-handler attribute;
// everything comes from /assets/, named by its content. Every form works
// without the script, every state change is a POST form (a search form is
// a GET form with role="search").
package console
