// Tocsin web app: copy buttons and confirmations. Every page works
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

  // <form data-confirm="message"> asks before it submits.
  document.addEventListener("submit", function (event) {
    var form = event.target, message = form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
})();
