// The page's point-label placer, held as a raw string: labels drawn on a
// chart's canvas next to their points, none overlapping another label or
// another point, so a printout or screenshot still says which dot is which.
// A label that cannot sit next to its point moves farther out on a leader
// line; one that fits nowhere falls back to its short form. The boxes are
// written to the canvas's data-labels attribute, which the browser test
// reads back.
#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {

const char kLabelScript[] = R"js(
window.servesimLabels = function (chart, items, font) {
  var ctx = chart.ctx, area = chart.chartArea, H = 12, PAD = 2;
  ctx.save();
  ctx.font = font || '11px sans-serif';
  ctx.textBaseline = 'middle';
  // Points are obstacles too: a label must not hide another dot.
  var taken = items.map(function (it) { return [it.x - 4, it.y - 4, 8, 8]; });
  function hits(b) {
    if (b[0] < area.left || b[1] < area.top ||
        b[0] + b[2] > area.right || b[1] + b[3] > area.bottom) return true;
    return taken.some(function (t) {
      return b[0] < t[0] + t[2] && t[0] < b[0] + b[2] && b[1] < t[1] + t[3] && t[1] < b[1] + b[3];
    });
  }
  // Rings of candidate spots, nearest first: above, right, below, left and
  // the diagonals.
  var dirs = [[0, -1], [1, 0], [0, 1], [-1, 0], [1, -1], [-1, -1], [1, 1], [-1, 1]];
  var rings = [8, 16, 28, 44, 64, 90];
  function place(text, it) {
    var w = ctx.measureText(text).width + 2 * PAD;
    for (var r = 0; r < rings.length; ++r) {
      for (var d = 0; d < dirs.length; ++d) {
        var cx = it.x + dirs[d][0] * (rings[r] + w / 2 * Math.abs(dirs[d][0]));
        var cy = it.y + dirs[d][1] * (rings[r] + H / 2 * Math.abs(dirs[d][1]));
        var b = [cx - w / 2, cy - H / 2, w, H];
        if (!hits(b)) return {box: b, far: r > 1};
      }
    }
    return null;
  }
  var placed = [];
  items.forEach(function (it) {
    var text = it.text, spot = place(text, it);
    if (!spot && it.short) { text = it.short; spot = place(text, it); }
    if (!spot) return;
    var b = spot.box;
    taken.push(b);
    if (spot.far) {  // a leader line from the point to the label's nearest edge
      ctx.strokeStyle = '#888';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(it.x, it.y);
      ctx.lineTo(Math.max(b[0], Math.min(it.x, b[0] + b[2])),
                 Math.max(b[1], Math.min(it.y, b[1] + b[3])));
      ctx.stroke();
    }
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(b[0], b[1], b[2], b[3]);
    ctx.fillStyle = it.color || '#222';
    ctx.textAlign = 'center';
    ctx.fillText(text, b[0] + b[2] / 2, b[1] + H / 2);
    placed.push(b.map(Math.round).concat([text]));
  });
  ctx.restore();
  chart.canvas.dataset.labels = JSON.stringify(placed);
  chart.canvas.dataset.labelsWanted = String(items.length);
};
)js";

}  // namespace servesim::html_report_internal
