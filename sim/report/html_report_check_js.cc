// The page's self-check, held as raw strings: a hook that runs before
// Chart.js loads and collects every error (uncaught, unhandled rejection,
// console.error), and a verdict written into <pre id="servesim-check"> once
// the page has loaded: each canvas with its count of drawn pixels and of
// coloured ones (data; axes and text are grey), then the errors. The
// browser test reads it from Chromium's --dump-dom output.
#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {

const char kErrorHookScript[] = R"js(
window.servesimErrors = [];
window.addEventListener('error', function (e) {
  window.servesimErrors.push('error: ' + (e.message || e));
});
window.addEventListener('unhandledrejection', function (e) {
  window.servesimErrors.push('unhandled rejection: ' + e.reason);
});
(function () {
  var original = console.error;
  console.error = function () {
    window.servesimErrors.push(Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
})();
)js";

const char kVerdictScript[] = R"js(
window.addEventListener('load', function () { setTimeout(function () {
  var canvases = document.querySelectorAll('canvas');
  var lines = ['charts: ' + canvases.length];
  canvases.forEach(function (c) {
    var ink = 0, colour = 0;
    try {
      var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (var i = 0; i < d.length; i += 4) {
        if (d[i + 3] === 0) continue;
        ++ink;
        // Axes, grid and text are grey; only data is drawn in colour.
        var hi = Math.max(d[i], d[i + 1], d[i + 2]), lo = Math.min(d[i], d[i + 1], d[i + 2]);
        if (hi - lo > 40) ++colour;
      }
    } catch (e) {
      console.error('verdict ' + c.id + ': ' + e);
    }
    lines.push('canvas ' + c.id + ' ink=' + ink + ' colour=' + colour);
  });
  lines.push('js-errors: ' + window.servesimErrors.length);
  window.servesimErrors.forEach(function (e) { lines.push('  ' + e); });
  document.getElementById('servesim-check').textContent = lines.join('\n');
}, 50); });
)js";

}  // namespace servesim::html_report_internal
