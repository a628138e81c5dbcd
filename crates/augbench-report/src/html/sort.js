// Sortable tables: click a header to sort by it (again to reverse). On load, a URL hash
// `#sort=<column key>[:asc|:desc]` sorts every table that has that column (numbers default to
// descending, text to ascending) and records the result in <body data-sorted>.
(function () {
  "use strict";
  function value(cell, type) {
    var raw = cell.getAttribute("data-value");
    if (type === "num") {
      var n = parseFloat(raw);
      return isNaN(n) ? null : n;
    }
    return (raw === null ? cell.textContent : raw).toLowerCase();
  }
  function sortTable(table, key, desc) {
    var heads = table.tHead.rows[0].cells;
    var index = -1;
    var type = "text";
    for (var i = 0; i < heads.length; i++) {
      heads[i].removeAttribute("aria-sort");
      if (heads[i].getAttribute("data-key") === key) {
        index = i;
        type = heads[i].getAttribute("data-type") || "text";
      }
    }
    if (index < 0) {
      return false;
    }
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a.cells[index], type);
      var y = value(b.cells[index], type);
      if (x === null || y === null) {
        return (x === null) - (y === null);
      }
      var c = x < y ? -1 : x > y ? 1 : 0;
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    heads[index].setAttribute("aria-sort", desc ? "descending" : "ascending");
    return true;
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.addEventListener("click", function () {
        var desc = th.getAttribute("aria-sort") === "ascending" ||
          (th.getAttribute("aria-sort") === null && th.getAttribute("data-type") === "num");
        sortTable(table, th.getAttribute("data-key"), desc);
      });
    });
  });
  var m = /(?:^#|&)sort=([^&:]+)(?::(asc|desc))?/.exec(location.hash);
  if (m) {
    var key = decodeURIComponent(m[1]);
    var sorted = 0;
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      var th = table.querySelector('th[data-key="' + key.replace(/"/g, "") + '"]');
      var desc = m[2] ? m[2] === "desc" : (th !== null && th.getAttribute("data-type") === "num");
      if (sortTable(table, key, desc)) {
        sorted += 1;
      }
    });
    document.body.setAttribute("data-sorted", key + ":" + sorted);
  }
})();
