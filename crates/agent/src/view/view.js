// slmcode view: the one script. A running run's page follows it: the server sends new
// timeline items (HTML it rendered and escaped), the header and a note that the budget chart
// changed, as server-sent events. Everything else on these pages is plain HTML.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live");
  if (!url || !window.EventSource) {
    return;
  }
  var timeline = document.getElementById("timeline");
  var source = new EventSource(url);
  source.addEventListener("items", function (e) {
    timeline.insertAdjacentHTML("beforeend", e.data);
  });
  source.addEventListener("summary", function (e) {
    document.getElementById("summary").innerHTML = e.data;
  });
  source.addEventListener("budget", function () {
    var img = document.getElementById("budget");
    if (img) {
      img.src = img.src.replace(/&t=\d+$/, "") + "&t=" + Date.now();
    }
  });
  source.addEventListener("end", function () {
    source.close();
    document.body.removeAttribute("data-live");
  });
})();
