// The report page's chart script, held as a raw string: it builds one
// Chart.js chart per plot from the embedded data (schema in html_report.h,
// already checked by html_report_validate.cc). Errors are logged with
// console.error, which the check script (html_report_check_js.cc) counts.
#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {

const char kReportScript[] = R"js(
(function () {
'use strict';
var STAT_COLORS = {mean: '#9467bd', p50: '#1f77b4', p90: '#ff7f0e', p99: '#d62728'};
var EXTRA = ['#2ca02c', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
var LABELS = {ttft_ms: 'TTFT', tpot_ms: 'TPOT', e2el_ms: 'E2E latency',
              itl_ms: 'ITL', queue_ms: 'Queue wait',
              mm1_wait_ms: 'M/M/1 wait (theory)', mg1_wait_ms: 'M/G/1 wait (theory)'};
var ORDER = ['ttft_ms', 'tpot_ms', 'e2el_ms', 'itl_ms', 'queue_ms'];
var count = 0, charts = [];

function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
function pos(v) { v = num(v); return v !== null && v > 0 ? v : null; }
function fmt(x) {
  var a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : String(+x.toPrecision(3));
}
function rgba(hex, a) {
  var n = parseInt(hex.slice(1), 16);
  return 'rgba(' + (n >> 16 & 255) + ',' + (n >> 8 & 255) + ',' + (n & 255) + ',' + a + ')';
}
function label(key) { return LABELS[key] || key; }
function unit(key) {
  return /_ms$/.test(key) ? 'ms' : /_s$/.test(key) ? 's' : /_rps$/.test(key) ? 'req/s' : 'value';
}
function ordered(keys) {
  return keys.slice().sort(function (a, b) {
    var i = ORDER.indexOf(a), j = ORDER.indexOf(b);
    return (i < 0 ? 99 : i) - (j < 0 ? 99 : j) || (a < b ? -1 : a > b ? 1 : 0);
  });
}
// mean first, then percentiles in increasing order.
function statRank(s) { var m = /^p([0-9.]+)$/.exec(s); return m ? +m[1] : -1; }

function axis(title, type, extra) {
  var a = {type: type || 'linear', title: {display: true, text: title}};
  for (var k in extra || {}) a[k] = extra[k];
  return a;
}

function addChart(section, title, config, wide) {
  var div = document.createElement('div');
  div.className = wide ? 'chart wide' : 'chart';
  var canvas = document.createElement('canvas');
  canvas.id = 'chart-' + section + '-' + (count++);
  div.appendChild(canvas);
  document.querySelector('#sec-' + section + ' .charts').appendChild(div);
  var o = config.options = config.options || {};
  o.animation = false;  // draw at once, so the verdict sees finished charts
  o.responsive = true;
  o.maintainAspectRatio = false;
  o.plugins = o.plugins || {};
  o.plugins.title = {display: true, text: title, font: {size: 14}};
  o.plugins.legend = {labels: {filter: function (item, d) {
    return !d.datasets[item.datasetIndex].bandEdge;
  }}};
  o.plugins.tooltip = o.plugins.tooltip || {};
  o.plugins.tooltip.filter = function (item) { return !item.dataset.bandEdge; };
  // What the chart draws, by name: the browser test reads it back.
  canvas.dataset.series = JSON.stringify(config.data.datasets.filter(function (d) {
    return !d.bandEdge;
  }).map(function (d) { return d.label; }));
  charts.push(new Chart(canvas, config));
}
// Charts sized for the screen would spill over a printed page's margin.
window.addEventListener('beforeprint', function () {
  charts.forEach(function (c) { c.resize(); });
});

function line(name, color, data, extra) {
  var d = {label: name, data: data, borderColor: color, backgroundColor: color,
           borderWidth: 2, pointRadius: 2, fill: false};
  for (var k in extra || {}) d[k] = extra[k];
  return d;
}

// A confidence band is two invisible edge datasets, the upper filled down to
// the lower ('-1'), then the mean line on top. A missing lo/hi collapses the
// band onto the mean (one replication has no interval).
function band(datasets, name, color, series, log) {
  var f = log ? pos : num, lo = [], hi = [], mean = [];
  series.forEach(function (s) {
    var iv = s.iv || {}, m = f(iv.mean);
    mean.push({x: s.x, y: m});
    lo.push({x: s.x, y: f(iv.lo) !== null ? f(iv.lo) : m});
    hi.push({x: s.x, y: f(iv.hi) !== null ? f(iv.hi) : m});
  });
  var edge = {borderWidth: 0, pointRadius: 0, pointHitRadius: 0, bandEdge: true,
              borderColor: rgba(color, 0), fill: false};
  datasets.push(Object.assign({label: name + ' lo', data: lo}, edge));
  datasets.push(Object.assign({label: name + ' hi', data: hi}, edge,
                              {fill: '-1', backgroundColor: rgba(color, 0.18)}));
  datasets.push(line(name, color, mean, {pointRadius: 3, bandMean: true}));
}

function unstablePoint(p) {
  return typeof p.unstable === 'boolean' ? p.unstable
      : num(p.stable_fraction) !== null && p.stable_fraction < 1;
}

// Unstable sweep points are drawn as red crosses on every mean line: their
// figures depend on the run length, not on the load alone.
function markUnstable(datasets, pts) {
  var flags = pts.map(unstablePoint);
  if (!flags.some(function (u) { return u; })) return;
  datasets.forEach(function (d) {
    if (!d.bandMean) return;
    var color = d.borderColor;
    d.pointStyle = flags.map(function (u) { return u ? 'crossRot' : 'circle'; });
    d.pointRadius = flags.map(function (u) { return u ? 7 : 3; });
    d.pointBorderColor = flags.map(function (u) { return u ? '#d62728' : color; });
    d.pointBorderWidth = flags.map(function (u) { return u ? 2 : 1; });
  });
}

function yRange(datasets, log) {
  var lo = Infinity, hi = -Infinity;
  datasets.forEach(function (d) {
    d.data.forEach(function (p) {
      var y = log ? pos(p.y) : num(p.y);
      if (y !== null) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
    });
  });
  return hi >= lo ? [log ? lo : Math.min(lo, 0), hi] : null;
}

// A vertical marker without plugins: a two-point line spanning the data.
function vline(datasets, x, name, color, log) {
  var r = yRange(datasets, log);
  if (r) datasets.push(line(name, color, [{x: x, y: r[0]}, {x: x, y: r[1]}],
                            {borderDash: [2, 3], borderWidth: 1.5, pointRadius: 0}));
}

// 1, 2, 2.5, 5 or 10 times a power of ten, at or above v.
function niceCeil(v) {
  if (!(v > 0)) return 1;
  var p = Math.pow(10, Math.floor(Math.log10(v)));
  var m = [1, 2, 2.5, 5, 10].find(function (k) { return k * p >= v * (1 - 1e-9); });
  return m * p;
}

// The offered-load axis from 0 with utilization rho = rate / mu along the
// top, so a printout reads the load both ways.
function loadAxes(ds, sat) {
  var xmax = 0;
  ds.forEach(function (d) {
    d.data.forEach(function (p) { if (num(p.x) !== null) xmax = Math.max(xmax, p.x); });
  });
  var top = niceCeil(xmax), scales = {x: axis('offered load (req/s)', 'linear', {min: 0, max: top})};
  if (sat !== null && sat > 0) {
    scales.rho = axis('utilization \u03c1 = rate / \u03bc', 'linear',
                      {position: 'top', min: 0, max: top / sat, ticks: {includeBounds: false},
                       grid: {drawOnChartArea: false}});
  }
  return scales;
}

function kneeRate(sw, pts) {
  if ('knee_rate' in sw) return num(sw.knee_rate);
  for (var i = 0; i < pts.length; ++i) {
    var m = (pts[i].metrics || {}).ttft_ms || {};
    var p50 = num((m.p50 || {}).mean), p99 = num((m.p99 || {}).mean);
    if (p50 !== null && p99 !== null && p99 > 3 * p50) return pts[i].rate;
  }
  return null;
}

function buildSweep(sw) {
  var pts = sw.points.slice().sort(function (a, b) { return a.rate - b.rate; });
  if (!pts.length) return;
  var knee = kneeRate(sw, pts), sat = num(sw.saturation_rps);
  var xmax = pts[pts.length - 1].rate;
  if (pts.some(function (p) { return p.throughput_rps; })) {
    var ds = [];
    band(ds, 'throughput (mean, CI)', '#2ca02c',
         pts.map(function (p) { return {x: p.rate, iv: p.throughput_rps}; }), false);
    if (sat !== null) {
      var top = Math.min(sat, xmax);
      ds.push(line('ideal: min(rate, saturation)', '#555',
                   [{x: 0, y: 0}, {x: top, y: top}, {x: xmax, y: top}],
                   {borderDash: [6, 4], pointRadius: 0}));
      vline(ds, sat, 'saturation: ' + fmt(sat) + ' req/s', '#555', false);
    }
    markUnstable(ds, pts);
    var sc = loadAxes(ds, sat);
    sc.y = axis('throughput (req/s)', 'linear', {beginAtZero: true});
    addChart('sweep', 'Throughput vs offered load', {type: 'line', data: {datasets: ds},
      options: {scales: sc}});
  }
  var metrics = [];
  pts.forEach(function (p) {
    Object.keys(p.metrics || {}).forEach(function (k) {
      if (metrics.indexOf(k) < 0) metrics.push(k);
    });
  });
  metrics = ordered(metrics);
  var theory = sw.theory || {};
  var theoryHome = metrics.indexOf('queue_ms') >= 0 ? 'queue_ms' : metrics[0];
  metrics.forEach(function (key) {
    var ds = [], stats = [];
    pts.forEach(function (p) {
      Object.keys((p.metrics || {})[key] || {}).forEach(function (s) {
        if (stats.indexOf(s) < 0) stats.push(s);
      });
    });
    stats.sort(function (a, b) { return statRank(a) - statRank(b); });
    stats.forEach(function (s, i) {
      band(ds, label(key) + ' ' + s, STAT_COLORS[s] || EXTRA[i % EXTRA.length],
           pts.map(function (p) { return {x: p.rate, iv: ((p.metrics || {})[key] || {})[s]}; }),
           true);
    });
    // Theory diverges as load nears saturation; beyond 10x the measured
    // maximum it would only flatten the measured curves.
    var r = yRange(ds, true), cap = r ? 10 * r[1] : Infinity;
    if (key === theoryHome) {
      Object.keys(theory).forEach(function (t, i) {
        var data = theory[t].map(function (q) {
          var y = pos(q[1]);
          return {x: q[0], y: y !== null && y <= cap ? y : null};
        });
        ds.push(line(label(t), EXTRA[i % EXTRA.length], data,
                     {borderDash: [6, 4], pointRadius: 0}));
      });
    }
    if (knee !== null) {
      vline(ds, knee, 'knee: ' + fmt(knee) + ' req/s', '#111', true);
    }
    markUnstable(ds, pts);
    var sc = loadAxes(ds, sat);
    sc.y = axis(label(key) + ' (' + unit(key) + ', log scale)', 'logarithmic');
    addChart('sweep', label(key) + ' vs offered load', {type: 'line', data: {datasets: ds},
      options: {scales: sc}});
  });
}

function buildCdfs(cdfs) {
  ordered(Object.keys(cdfs)).forEach(function (key, i) {
    var data = cdfs[key].map(function (q) { return {x: q[0], y: num(q[1])}; });
    var log = data.length > 0 && data.every(function (p) { return p.x > 0; });
    var color = [STAT_COLORS.p50, STAT_COLORS.p99, EXTRA[0], EXTRA[1]][i % 4];
    addChart('cdfs', label(key) + ' CDF', {type: 'line', data: {datasets: [
        line(label(key), color, data, {pointRadius: 0})]},
      options: {scales: {
        x: axis(label(key) + ' (' + unit(key) + (log ? ', log scale)' : ')'),
                log ? 'logarithmic' : 'linear'),
        y: axis('fraction of requests \u2264 x', 'linear', {min: 0, max: 1})}}});
  });
}

function buildTimeseries(ts) {
  function series(key, scale) {
    return ts.t_s.map(function (t, i) { return {x: t, y: ts[key][i] * scale}; });
  }
  var x = function () { return axis('simulated time (s)'); };
  if (ts.kv_usage) {
    addChart('timeseries', 'KV-cache usage', {type: 'line', data: {datasets: [
        line('KV blocks in use', '#9467bd', series('kv_usage', 100),
             {pointRadius: 0, fill: 'origin', backgroundColor: rgba('#9467bd', 0.15)})]},
      options: {scales: {x: x(), y: axis('KV-cache blocks in use (%)', 'linear',
                                         {min: 0, max: 100})}}});
  }
  var ds = [];
  if (ts.waiting) ds.push(line('waiting', '#d62728', series('waiting', 1), {pointRadius: 0, stepped: true}));
  if (ts.running) ds.push(line('running', '#1f77b4', series('running', 1), {pointRadius: 0, stepped: true}));
  if (ds.length) {
    addChart('timeseries', 'Queue length', {type: 'line', data: {datasets: ds},
      options: {scales: {x: x(), y: axis('requests', 'linear', {beginAtZero: true})}}});
  }
}

function buildBatch(hist) {
  var rows = hist.slice().sort(function (a, b) { return a[0] - b[0]; });
  var steps = 0, seqs = 0;
  rows.forEach(function (r) { steps += num(r[1]) || 0; seqs += r[0] * (num(r[1]) || 0); });
  var mean = steps > 0 ? ', mean ' + fmt(seqs / steps) : '';
  addChart('batch', 'Batch size distribution' + mean, {type: 'bar', data: {
      labels: rows.map(function (r) { return String(r[0]); }),
      datasets: [{label: 'engine steps', data: rows.map(function (r) { return num(r[1]); }),
                  backgroundColor: rgba('#1f77b4', 0.75), borderColor: '#1f77b4',
                  borderWidth: 1, barPercentage: 1.0, categoryPercentage: 0.95}]},
    options: {scales: {x: axis('batch size (sequences per step)', 'category'),
                       y: axis('engine steps (count)', 'linear', {beginAtZero: true})}}},
    true);
}

function buildLoops(loops) {
  var pts = loops.points.slice().sort(function (a, b) {
    return a.throughput_rps - b.throughput_rps;
  });
  var modes = [['closed', 'closed loop', '#1f77b4'],
               ['open_poisson', 'open loop, Poisson', '#d62728'],
               ['open_gamma', 'open loop, gamma (bursty)', '#ff7f0e']];
  var sat = num(loops.saturation_rps), theory = loops.theory || {};
  function series(mode, key) {
    return pts.map(function (p) {
      return {x: p.throughput_rps, y: pos((p[mode] || {})[key]), n: p.concurrency};
    });
  }
  var tooltip = {callbacks: {title: function (items) {
    var raw = items.length ? items[0].raw : null;
    return raw && raw.n ? 'N = ' + raw.n + ' (' + fmt(raw.x) + ' req/s)' : '';
  }}};
  function chart(title, keys, ytitle, withTheory) {
    var ds = [];
    modes.forEach(function (m) {
      if (!pts.some(function (p) { return p[m[0]]; })) return;
      keys.forEach(function (k) {
        ds.push(line(m[1] + ' ' + k[1], m[2], series(m[0], k[0]),
                     k[2] ? {borderDash: k[2], borderWidth: 1.5} : {}));
      });
    });
    // Theory diverges at mu; past 10x the largest measured wait it would
    // only flatten the simulated curves.
    var r = yRange(ds, true), cap = r ? 10 * r[1] : Infinity;
    if (withTheory) {
      [['mm1_wait_ms', '#2ca02c'], ['mg1_wait_ms', '#8c564b']].forEach(function (t) {
        if (!theory[t[0]]) return;
        ds.push(line(label(t[0]), t[1], theory[t[0]].map(function (q) {
          var y = pos(q[1]);
          return {x: q[0], y: y !== null && y <= cap ? y : null};
        }), {borderDash: [6, 4], pointRadius: 0}));
      });
    }
    if (sat !== null) vline(ds, sat, 'saturation \u03bc = ' + fmt(sat) + ' req/s', '#111', true);
    // Each closed-loop point is labelled with its N (the first dataset),
    // placed clear of the other labels and points.
    var labelN = {id: 'labelN', afterDatasetsDraw: function (c) {
      var meta = c.getDatasetMeta(0);
      if (!meta || !meta.data) return;
      var items = [];
      meta.data.forEach(function (el, i) {
        var raw = c.data.datasets[0].data[i];
        if (raw && raw.y !== null && isFinite(el.x) && isFinite(el.y)) {
          items.push({x: el.x, y: el.y, text: 'N=' + raw.n, color: '#1f77b4'});
        }
      });
      window.servesimLabels(c, items, '10px sans-serif');
    }};
    addChart('loops', title, {type: 'line', data: {datasets: ds}, plugins: [labelN],
      options: {plugins: {tooltip: tooltip},
                // Room at the edges, so the first and last labels are not cut.
                layout: {padding: {top: 8, right: 16}},
                scales: {x: axis('throughput (req/s); closed loop at concurrency N', 'linear',
                                 {min: 0}),
                         y: axis(ytitle, 'logarithmic')}}});
  }
  chart('TTFT at equal throughput',
        [['ttft_p99_ms', 'p99'], ['ttft_p50_ms', 'p50', [3, 3]]], 'TTFT (ms, log scale)', false);
  chart('Queue wait at equal throughput', [['queue_mean_ms', 'mean']],
        'mean queue wait (ms, log scale)', true);
}

// Search: every evaluated candidate, its Pareto front drawn over it and
// each front point labelled with its deployment.
function searchLabel(r) {
  var t = r.max_num_batched_tokens;
  return r.gpu + '\u00d7' + r.tp + ' ' + r.max_num_seqs + ' seqs ' +
         (t % 1024 === 0 ? t / 1024 + 'k' : t) + ' tok' +
         (r.chunked_prefill === false ? ' no-chunk' : '');
}
function buildSearch(search) {
  var all = search.rows || [];
  var rows = all.filter(function (r) { return r.status === 'evaluated'; });
  function chart(title, xkey, ykey, flag, xtitle, ytitle, xlog) {
    function pts(front) {
      return rows.filter(function (r) { return !!r[flag] === front; }).map(function (r) {
        return {x: pos(r[xkey]), y: pos(r[ykey]), name: searchLabel(r),
                row: all.indexOf(r) + 1};
      }).filter(function (p) { return p.x !== null && p.y !== null; });
    }
    var front = pts(true).sort(function (a, b) { return a.x - b.x; });
    var labels = {id: 'paretoLabels', afterDatasetsDraw: function (c) {
      var meta = c.getDatasetMeta(0);
      window.servesimLabels(c, meta.data.map(function (el, i) {
        var p = c.data.datasets[0].data[i];
        return {x: el.x, y: el.y, text: p.name, short: '#' + p.row, color: '#a01c1c'};
      }).filter(function (it) { return isFinite(it.x) && isFinite(it.y); }));
    }};
    addChart('search', title, {type: 'scatter', data: {datasets: [
        line('Pareto front', '#d62728', front, {showLine: true, pointRadius: 4}),
        line('other candidates', '#7f7f7f', pts(false), {pointRadius: 3})]},
      plugins: [labels],
      options: {plugins: {tooltip: {callbacks: {label: function (item) {
                  return item.raw.name + ': (' + fmt(item.raw.x) + ', ' + fmt(item.raw.y) + ')';
                }}}},
                layout: {padding: {top: 8, right: 16}},
                scales: {x: axis(xtitle, xlog ? 'logarithmic' : 'linear', {grace: '10%'}),
                         y: axis(ytitle, 'linear', {grace: '10%'})}}});
  }
  chart('Throughput per GPU vs interactivity', 'tokens_per_s_per_user',
        'output_tokens_per_s_per_gpu', 'pareto_throughput',
        'tokens/s per user (1000 / TPOT p50) at the SLO max', 'output tokens/s per GPU');
  chart('Cost vs time to first token', 'ttft_p99_ms_at_max', 'usd_per_million_output_tokens',
        'pareto_cost', 'TTFT p99 at the SLO max (ms, log scale)', '$ per million output tokens', true);
}

// Capacity and search: for each candidate, every SLO percentile at every
// rate its bisection tried (mean with its 95% interval as an error bar;
// green passed, red failed), the limit as a dashed line, the SLO max as a
// vertical line -- latency against load, where the answer came from.
function buildTrails(section, rows) {
  rows.forEach(function (r) {
    var evals = (r.evaluations || []).slice().sort(function (a, b) { return a.rate - b.rate; });
    if (!evals.length) return;
    var name = r.gpu + ' tp' + r.tp + (r.pp ? ' pp' + r.pp : '') +
               (r.max_num_seqs ? ' seqs' + r.max_num_seqs +
               ' tokens' + r.max_num_batched_tokens + (r.chunked_prefill ? ' chunked' : '') : '');
    var terms = Object.keys(evals[0].slo || {});
    terms.forEach(function (term) {
      var limit = num(evals[0].slo[term].limit_ms);
      function pts(passed) {
        return evals.filter(function (e) { return !!e.feasible === passed; }).map(function (e) {
          var v = e.slo[term].value_ms || {};
          return {x: e.rate, y: pos(v.mean), lo: pos(v.lo), hi: pos(v.hi)};
        }).filter(function (p) { return p.y !== null; });
      }
      var ds = [line('passed', '#2ca02c', pts(true), {pointRadius: 4}),
                line('failed', '#d62728', pts(false), {pointRadius: 4})];
      var xs = evals.map(function (e) { return e.rate; });
      var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
      if (limit !== null) {
        ds.push(line('limit ' + fmt(limit) + ' ms', '#555', [{x: lo, y: limit}, {x: hi, y: limit}],
                     {showLine: true, pointRadius: 0, borderDash: [6, 4], borderWidth: 1.5}));
      }
      var errorBars = {id: 'errorBars', afterDatasetsDraw: function (c) {
        var ctx = c.ctx, yScale = c.scales.y;
        ctx.save();
        [0, 1].forEach(function (di) {
          var meta = c.getDatasetMeta(di);
          ctx.strokeStyle = c.data.datasets[di].borderColor;
          meta.data.forEach(function (el, i) {
            var p = c.data.datasets[di].data[i];
            if (!p || p.lo === null || p.hi === null) return;
            ctx.beginPath();
            ctx.moveTo(el.x, yScale.getPixelForValue(p.lo));
            ctx.lineTo(el.x, yScale.getPixelForValue(p.hi));
            ctx.stroke();
          });
        });
        ctx.restore();
      }};
      var maxRate = num(r.max_rate_per_replica);
      var title = name + ': ' + term + ' vs rate tried' +
                  (maxRate ? ' (SLO max ' + fmt(maxRate) + ' req/s)' : '');
      addChart(section, title, {type: 'scatter', data: {datasets: ds}, plugins: [errorBars],
        options: {scales: {x: axis('arrival rate per replica (req/s)'),
                           y: axis(term + ' (ms, log scale; bars: 95% interval)',
                                   'logarithmic')}}});
    });
  });
}

// Capacity's long-window validation: every window's threshold rate (the
// largest rate at which that window met the SLO), sorted, with the answer
// (their 5% quantile, log-normal) and its 95% interval as lines.
function buildValidation(rows) {
  rows.forEach(function (r) {
    var v = r.validation;
    if (!v || !v.windows || !v.windows.length) return;
    var rates = v.windows.map(function (w) { return w.max_rate; })
        .sort(function (a, b) { return a - b; });
    var n = rates.length;
    var pts = rates.map(function (y, i) { return {x: 100 * (i + 0.5) / n, y: y}; });
    var ans = v.max_rate || {};
    function level(name, color, y, dash) {
      return line(name, color, [{x: 0, y: y}, {x: 100, y: y}],
                  {showLine: true, pointRadius: 0, borderDash: dash, borderWidth: 1.5});
    }
    var ds = [line('window threshold rates', '#1f77b4', pts, {pointRadius: 4})];
    if (num(ans.mean) !== null) ds.push(level('answer ' + fmt(ans.mean) + ' req/s', '#d62728', ans.mean, []));
    if (num(ans.lo) !== null) ds.push(level('95% interval', '#555', ans.lo, [6, 4]));
    if (num(ans.hi) !== null) {
      ds.push(level('95% interval (upper)', '#555', ans.hi, [6, 4]));
      ds[ds.length - 1].bandEdge = true;  // one legend entry for the pair
    }
    addChart('capacity', r.gpu + ' tp' + r.tp + (r.pp ? ' pp' + r.pp : '') +
             ': validation, ' + n + ' windows of ' +
             v.window_requests + ' requests (answer: ' + fmt(100 * v.share) +
             '% of windows meet the SLO)', {type: 'scatter', data: {datasets: ds},
      options: {scales: {x: axis('windows, sorted by threshold (percent)'),
                         y: axis('highest rate meeting the SLO (req/s)')}}});
  });
}

function buildCapacity(cap) {
  var rows = (cap.rows || []).filter(function (r) { return r.fits !== false; });
  buildTrails('capacity', rows);
  buildValidation(rows);
}

var builders = [['sweep', buildSweep], ['cdfs', buildCdfs], ['timeseries', buildTimeseries],
                ['batch_size_hist', buildBatch], ['loops', buildLoops],
                ['search', function (s) {
                  buildSearch(s);
                  buildTrails('search', (s.rows || []).filter(function (r) {
                    return r.status === 'evaluated';
                  }));
                }],
                ['capacity', buildCapacity]];
try {
  if (typeof Chart === 'undefined') throw new Error('Chart.js did not load');
  var data = JSON.parse(document.getElementById('servesim-data').textContent);
  builders.forEach(function (b) {
    if (!data[b[0]]) return;
    try { b[1](data[b[0]]); } catch (e) { console.error(b[0] + ': ' + (e.stack || e)); }
  });
} catch (e) {
  console.error('report: ' + (e.stack || e));
}
})();
)js";

}  // namespace servesim::html_report_internal
