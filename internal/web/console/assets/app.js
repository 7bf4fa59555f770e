// Tocsin web app: copy buttons, confirmations and live states. Every page works
// without this file: a secret stays selectable text, a form submits.
(function () {
  "use strict";
  var live = document.getElementById("live");

  function say(message) {
    if (!live) return;
    live.textContent = "";
    window.setTimeout(function () { live.textContent = message; }, 50);
  }

  // <button data-copy="id"> copies the text of the element with that id
  // (or its data-copy-value, when what is shown is spaced for reading).
  if (navigator.clipboard && window.isSecureContext) {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var label = button.textContent;
      button.hidden = false;
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        if (!source) return;
        var text = source.getAttribute("data-copy-value") || source.textContent.trim();
        navigator.clipboard.writeText(text).then(function () {
          button.textContent = "Copied";
          say("Copied");
          window.setTimeout(function () { button.textContent = label; }, 2000);
        }, function () {
          say("Could not copy: select the text and copy it yourself");
        });
      });
    });
  }

  // <main data-live="/w/…/live"> follows state changes: the [data-state] cell of each row
  // [data-monitor-id] or [data-heartbeat-id] gets the new state (its badge's text and class s-…).
  var main = document.querySelector("main[data-live]");
  if (main && window.EventSource) {
    var source = new EventSource(main.getAttribute("data-live"));
    var patch = function (s, announce) {
      var attr = s.kind === "heartbeat" ? "data-heartbeat-id" : "data-monitor-id";
      document.querySelectorAll("[" + attr + "]").forEach(function (row) {
        var cell = row.hasAttribute("data-state") ? row : row.querySelector("[data-state]");
        if (row.getAttribute(attr) !== s.id || !cell || cell.getAttribute("data-state") === s.state) return;
        cell.setAttribute("data-state", s.state);
        cell.className = cell.className.replace(/\bs-\S+/g, "").trim() + " s-" + s.state.toLowerCase();
        cell.textContent = s.state.toLowerCase();
        if (announce) say((row.getAttribute("data-name") || (row.querySelector("a") || row).textContent.trim()) + " is " + s.state.toLowerCase());
      });
    };
    source.addEventListener("snapshot", function (e) { JSON.parse(e.data).forEach(function (s) { patch(s, false); }); });
    source.addEventListener("state", function (e) { patch(JSON.parse(e.data), true); });
    source.addEventListener("end", function () { source.close(); });
  }

  // <form data-confirm="message"> asks before it submits.
  document.addEventListener("submit", function (event) {
    var form = event.target, message = form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
})();
