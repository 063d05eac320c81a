// cloudstic ui: live panels. The server renders every fragment (escaped by
// html/template); this script only swaps them in and ticks the countdowns.
// Every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-events]").forEach(function (section) {
    var es = new EventSource(section.getAttribute("data-events"));
    var swap = function (e) {
      var body = section.firstElementChild && section.querySelector("[id$='-body']");
      // Each event's data is the fragment as one JSON string.
      if (body) { body.outerHTML = JSON.parse(e.data); }
    };
    es.addEventListener("locks", swap);
    es.addEventListener("job", swap);
    es.addEventListener("end", function () { es.close(); });
  });
  setInterval(function () {
    document.querySelectorAll(".countdown[data-remaining]").forEach(function (td) {
      var left = parseInt(td.getAttribute("data-remaining"), 10) - 1;
      td.setAttribute("data-remaining", String(left));
      td.textContent = left < 0 ? "expired" : left + "s";
    });
  }, 1000);
});
