// Plotly sizes a plot when it is drawn; a plot drawn inside a closed <details> needs a resize when opened.
document.addEventListener("toggle", function (ev) {
  if (ev.target.tagName === "DETAILS" && ev.target.open && window.Plotly) {
    ev.target.querySelectorAll(".js-plotly-plot").forEach(function (p) { window.Plotly.Plots.resize(p); });
  }
}, true);
