// Tocsin status page editor: drag a component to another place or group, and the page
// saves the new order. Without this file, or a mouse, the "Move up" and "Move down"
// buttons do the same.
(function () {
  "use strict";
  var list = document.querySelector("[data-reorder]"), form = document.getElementById("sp-order");
  if (!list || !form) return;
  var dragged = null;
  var within = function (e, sel) { return e.target && e.target.closest ? e.target.closest(sel) : null; };

  list.addEventListener("dragstart", function (e) {
    var item = within(e, "[data-component]");
    if (!item) return;
    dragged = item;
    item.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", item.getAttribute("data-component"));
  });
  list.addEventListener("dragend", function () {
    if (dragged) dragged.classList.remove("dragging");
    dragged = null;
  });
  // Over a component, the dragged one goes before or after it; over a group, at its end.
  list.addEventListener("dragover", function (e) {
    var group = within(e, "[data-group]");
    if (!dragged || !group) return;
    e.preventDefault();
    var items = group.querySelector(".sp-components"), over = within(e, "[data-component]");
    if (over && over !== dragged) {
      var box = over.getBoundingClientRect();
      items.insertBefore(dragged, e.clientY < box.top + box.height / 2 ? over : over.nextSibling);
    } else if (!over) {
      items.appendChild(dragged);
    }
  });
  // On drop, the hidden form sends every component's group and place, in order.
  list.addEventListener("drop", function (e) {
    if (!dragged) return;
    e.preventDefault();
    form.textContent = "";
    list.querySelectorAll("[data-group]").forEach(function (group) {
      group.querySelectorAll("[data-component]").forEach(function (item) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = "order";
        input.value = group.getAttribute("data-group") + ":" + item.getAttribute("data-component");
        form.appendChild(input);
      });
    });
    form.submit();
  });
})();
