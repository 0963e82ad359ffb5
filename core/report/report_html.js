// report.html's script (embedded in kq by core/CMakeLists.txt; rendered by report_html.cpp).
// Draws the plots with Chart.js from the data the page carries: summary.json in #kq-summary and
// the round and light records of rounds.jsonl in #kq-rounds. The page marks each plot it expects
// as <section class="plot" data-plot="NAME"> holding a <div class="chart-host">. When every
// expected plot has its charts, each with a non-empty dataset laid out, the script appends a
// hidden div#kq-plots-ready whose data-count is the number of plots and data-charts the number of
// Chart.js charts (tests look for it in the rendered DOM); otherwise #kq-plots-error says what
// failed.
(function () {
  'use strict';

  const errors = [];
  function fail(message) {
    const box = document.getElementById('kq-plots-error') || document.createElement('div');
    box.id = 'kq-plots-error';
    box.className = 'error';
    box.textContent = 'Plots not drawn: ' + message;
    if (!box.parentNode) document.body.insertBefore(box, document.body.firstChild);
  }
  if (typeof Chart === 'undefined') {
    fail('Chart.js did not load.');
    return;
  }

  const summary = JSON.parse(document.getElementById('kq-summary').textContent);
  const rounds = JSON.parse(document.getElementById('kq-rounds').textContent);
  const timing = summary.timing || [];
  const decision = summary.decision || {};
  const baseline = decision.baseline || '';
  const minSpeedup = decision.min_speedup || 1;

  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.responsive = true;
  Chart.defaults.font.size = 12;
  Chart.defaults.color = '#222';

  // Arms in a stable order (the manifest's), each with its colour in every plot.
  const timedArms = [];
  const addArm = (name) => {
    if (name && !timedArms.includes(name)) timedArms.push(name);
  };
  const seen = new Set();
  timing.forEach((row) => row.arms.forEach((a) => seen.add(a.arm)));
  rounds.forEach((r) => {
    if (r.type === 'round') seen.add(r.arm);
  });
  (summary.arms || []).forEach((a) => {
    if (seen.has(a.name)) addArm(a.name);
  });
  [...seen].sort().forEach(addArm);
  // Twenty distinct colours (bars and points have no dash to tell arms apart), then dashes.
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                   '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
                   '#393b79', '#e6550d', '#637939', '#843c39', '#7b4173',
                   '#3182bd', '#8c6d31', '#31a354', '#756bb1', '#636363'];
  const dashes = [[], [8, 4], [3, 3], [10, 3, 2, 3]];
  const colour = (arm) => palette[Math.max(0, timedArms.indexOf(arm)) % palette.length];
  const dash = (arm) =>
    dashes[Math.floor(Math.max(0, timedArms.indexOf(arm)) / palette.length) % dashes.length];
  const faint = (hex, alpha) => hex + (alpha || '55');
  const armLabel = (arm) => (arm === baseline ? arm + ' (baseline)' : arm);

  // Formatting, with units.
  const superscript = {'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴',
                       '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹'};
  function fmtSize(n) {
    const k = Math.log2(n);
    if (n > 1 && Number.isInteger(k))
      return '2' + String(k).split('').map((c) => superscript[c]).join('');
    return Number(n).toLocaleString('en-US');
  }
  function fmtTime(s) {
    if (!(s > 0)) return '0';
    const [f, unit] = s >= 1 ? [1, 's']
                    : s >= 1e-3 ? [1e3, 'ms']
                    : s >= 1e-6 ? [1e6, 'µs']
                    : [1e9, 'ns'];
    return +(s * f).toPrecision(3) + ' ' + unit;
  }
  // Ticks of a log axis: 1, 2 and 5 of each decade within [lo, hi].
  function ticks125(lo, hi) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); ++e)
      [1, 2, 5].forEach((m) => {
        const v = +(m * Math.pow(10, e)).toPrecision(6);
        if (v >= lo && v <= hi) out.push({value: v});
      });
    return out;
  }
  const sizeLabel = (n) => fmtSize(n) + ' elements';
  // Format 2 (timed at points, `size` their number in the run): each size's point names it, and
  // the time plot places it by the bytes one call moves.
  const pointOf = new Map(timing.filter((r) => r.point).map((r) => [r.size, r.point]));
  const whereLabel = (size) => pointOf.get(size) || sizeLabel(size);
  const shaped = pointOf.size > 0;
  function median(v) {
    const s = [...v].sort((a, b) => a - b);
    if (!s.length) return NaN;
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }
  const armRow = (row, arm) => row.arms.find((a) => a.arm === arm);

  function newCanvas(host, height, title) {
    const panel = document.createElement('div');
    panel.className = 'panel';
    if (title) {
      const h = document.createElement('h4');
      h.textContent = title;
      panel.appendChild(h);
    }
    const box = document.createElement('div');
    box.className = 'chart';
    box.style.height = height + 'px';
    const canvas = document.createElement('canvas');
    box.appendChild(canvas);
    panel.appendChild(box);
    host.appendChild(panel);
    return canvas;
  }
  const axisTitle = (text) => ({display: true, text: text, font: {size: 13, weight: 'bold'}});

  // Horizontal reference lines: [{y, label, dash}].
  const referenceLines = {
    id: 'kqReferenceLines',
    afterDatasetsDraw(chart, args, opts) {
      const lines = opts.lines || [];
      const {ctx, chartArea, scales} = chart;
      lines.forEach((l) => {
        const y = scales.y.getPixelForValue(l.y);
        if (y < chartArea.top || y > chartArea.bottom) return;
        ctx.save();
        ctx.strokeStyle = l.colour || '#444';
        ctx.lineWidth = 1.5;
        ctx.setLineDash(l.dash || []);
        ctx.beginPath();
        ctx.moveTo(chartArea.left, y);
        ctx.lineTo(chartArea.right, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.font = '12px sans-serif';
        ctx.textAlign = 'right';
        const w = ctx.measureText(l.label).width;
        ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
        ctx.fillRect(chartArea.right - w - 8, y - 17, w + 6, 15);
        ctx.fillStyle = l.colour || '#444';
        ctx.fillText(l.label, chartArea.right - 5, y - 5);
        ctx.restore();
      });
    },
  };

  // (a) Time per call against size (format 2: the bytes a call moves), log-log: the median per
  // arm, the min as a faint dashed line.
  function plotTime(host) {
    const xOf = (row) => (shaped ? row.bytes : row.size);
    const sizes = timing.map(xOf);
    const tickLabel = new Map(timing.map((r) => [xOf(r), shaped ? r.point : fmtSize(r.size)]));
    const datasets = [];
    timedArms.forEach((arm) => {
      const med = [], min = [];
      timing.forEach((row) => {
        const a = armRow(row, arm);
        const where = whereLabel(row.size);
        if (a && a.median_s > 0) {
          med.push({x: xOf(row), y: a.median_s, where});
          min.push({x: xOf(row), y: a.min_s, where});
        }
      });
      if (!med.length) return;
      datasets.push({label: armLabel(arm), data: med, showLine: true, borderColor: colour(arm),
                     backgroundColor: colour(arm), borderDash: dash(arm),
                     borderWidth: arm === baseline ? 3 : 2, pointRadius: 4});
      datasets.push({label: arm + ' (min)', data: min, showLine: true, kqMin: true,
                     borderColor: faint(colour(arm)), backgroundColor: faint(colour(arm)),
                     borderDash: [4, 4], borderWidth: 1, pointRadius: 2});
    });
    const times = datasets.flatMap((d) => d.data.map((p) => p.y)).filter((y) => y > 0);
    const lowest = Math.min(...times), highest = Math.max(...times);
    const canvas = newCanvas(host, 480);
    return new Chart(canvas, {
      type: 'scatter',
      data: {datasets},
      options: {
        scales: {
          x: {type: 'logarithmic', min: Math.min(...sizes) / 2, max: Math.max(...sizes) * 2,
              title: axisTitle(shaped ? 'bytes moved per call at each point (log scale)'
                                      : 'size (elements, log scale)'),
              afterBuildTicks: (axis) => { axis.ticks = sizes.map((v) => ({value: v})); },
              ticks: {callback: (v) => tickLabel.get(v) || fmtSize(v)}},
          y: {type: 'logarithmic', min: lowest / 1.5, max: highest * 1.5,
              title: axisTitle('time per call (log scale)'),
              afterBuildTicks: (axis) => { axis.ticks = ticks125(axis.min, axis.max); },
              ticks: {autoSkip: false, callback: (v) => fmtTime(v)}},
        },
        plugins: {
          subtitle: {display: true,
                     text: 'solid: the median of each arm; faint dashed: its fastest round (min)'},
          legend: {position: 'right',
                   labels: {filter: (item) => !datasets[item.datasetIndex].kqMin}},
          tooltip: {callbacks: {label: (c) => c.dataset.label + ': ' + fmtTime(c.parsed.y) +
                                               ' at ' + c.raw.where}},
        },
      },
    });
  }

  // (b) % of the speed of light per arm and size; GB/s when the light was not measured.
  function plotLight(host) {
    const light = timing.some((row) => row.arms.some((a) => a.pct_light != null));
    const key = light ? 'pct_light' : 'gbps';
    const datasets = [];
    timedArms.forEach((arm) => {
      const data = timing.map((row) => {
        const a = armRow(row, arm);
        return a && a[key] != null ? a[key] : null;
      });
      if (data.every((v) => v == null)) return;
      datasets.push({label: armLabel(arm), data, backgroundColor: faint(colour(arm), 'bb'),
                     borderColor: colour(arm), borderWidth: 1});
    });
    const canvas = newCanvas(host, 420);
    const lines = light ? [{y: 100, label: '100%: the device-to-device copy', dash: [6, 4]}] : [];
    return new Chart(canvas, {
      type: 'bar',
      data: {labels: timing.map((r) => whereLabel(r.size)), datasets},
      plugins: [referenceLines],
      options: {
        scales: {
          x: {title: axisTitle(shaped ? 'point' : 'size')},
          y: {beginAtZero: true, suggestedMax: light ? 105 : undefined,
              title: axisTitle(light ? '% of the speed of light (copy bandwidth)'
                                     : 'bandwidth (GB/s)'),
              ticks: {callback: (v) => (light ? v + '%' : v + ' GB/s')}},
        },
        plugins: {
          kqReferenceLines: {lines},
          legend: {position: 'right'},
          tooltip: {callbacks: {label: (c) => c.dataset.label + ': ' + c.parsed.y.toFixed(1) +
                                             (light ? '%' : ' GB/s')}},
        },
      },
    });
  }

  // Each arm's device ("arm#2" is arm's second instance): CPU arms take hundreds of
  // microseconds where GPU arms take a few, so their rounds are never drawn on one axis.
  const devices = new Map((summary.arms || []).map((a) => [a.name, a.device || '']));
  const deviceOf = (arm) => devices.get(String(arm).split('#')[0]) || '';

  // (c) Every round per arm, one panel per mode, size and device: a strip plot, the median
  // marked.
  function plotRounds(host) {
    const groups = new Map();
    rounds.forEach((r) => {
      if (r.type !== 'round' || !(r.seconds > 0)) return;
      const mode = r.mode || 'single';
      const device = deviceOf(r.arm);
      const key = mode + '|' + r.size + '|' + device;
      if (!groups.has(key)) groups.set(key, {mode, size: r.size, device, arms: new Map()});
      const g = groups.get(key);
      if (!g.arms.has(r.arm)) g.arms.set(r.arm, []);
      g.arms.get(r.arm).push(r);
    });
    const manyDevices = new Set([...groups.values()].map((g) => g.device)).size > 1;
    const modeRank = (m) => (m === 'single' ? '0' : '1' + m);
    const keys = [...groups.keys()].sort((a, b) => {
      const ga = groups.get(a), gb = groups.get(b);
      const ma = modeRank(ga.mode), mb = modeRank(gb.mode);
      if (ma !== mb) return ma < mb ? -1 : 1;
      if (ga.size !== gb.size) return ga.size - gb.size;
      return ga.device < gb.device ? 1 : ga.device > gb.device ? -1 : 0;  // cuda before cpu
    });
    const charts = [];
    keys.forEach((key) => {
      const g = groups.get(key);
      const arms = timedArms.filter((a) => g.arms.has(a));
      const datasets = [];
      const medians = [], leftOut = [];
      let n = 0;
      arms.forEach((arm, i) => {
        const rs = g.arms.get(arm);
        const kept = rs.filter((r) => !r.left_out);
        n = Math.max(n, rs.length);
        // A deterministic jitter spreads the samples of one arm over its row.
        const jitter = (j) => (((j * 0.6180339887) % 1) - 0.5) * 0.5;
        const point = (r, j) => ({x: r.seconds, y: i + jitter(j), round: r.round});
        datasets.push({label: armLabel(arm), data: kept.map(point),
                       backgroundColor: faint(colour(arm), '88'), borderColor: colour(arm),
                       borderWidth: 1, pointRadius: 3, kqArm: true});
        rs.filter((r) => r.left_out).forEach((r, j) => leftOut.push(point(r, j)));
        if (kept.length) medians.push({x: median(kept.map((r) => r.seconds)), y: i});
      });
      datasets.push({label: 'median', data: medians, pointStyle: 'line', pointRotation: 90,
                     pointRadius: 11, borderWidth: 3, borderColor: '#000',
                     backgroundColor: '#000'});
      if (leftOut.length)
        datasets.push({label: 'throttled or unheld (left out of the statistics)', data: leftOut,
                       pointStyle: 'crossRot', pointRadius: 5, borderWidth: 2,
                       borderColor: '#c00', backgroundColor: '#c00'});
      const title = whereLabel(g.size) + ', ' + g.mode + (g.mode === 'single' ? ' launches' : '') +
                    (manyDevices && g.device ? ', ' + g.device + ' arms' : '') + ': ' + n +
                    ' rounds per arm';
      const canvas = newCanvas(host, 90 + 30 * arms.length, title);
      charts.push(new Chart(canvas, {
        type: 'scatter',
        data: {datasets},
        options: {
          scales: {
            x: {title: axisTitle('time per call (every round)'),
                ticks: {callback: (v) => fmtTime(v)}},
            y: {min: -0.5, max: arms.length - 0.5, reverse: true,
                afterBuildTicks: (axis) => { axis.ticks = arms.map((_, i) => ({value: i})); },
                ticks: {autoSkip: false, callback: (v) => armLabel(arms[v] || '')},
                grid: {color: '#eee'}},
          },
          plugins: {
            legend: {position: 'top', align: 'end',
                     labels: {usePointStyle: true,
                              filter: (item) => !datasets[item.datasetIndex].kqArm}},
            tooltip: {callbacks: {label: (c) => c.dataset.label + ': ' + fmtTime(c.parsed.x) +
                                               (c.raw.round != null ? ', round ' + c.raw.round
                                                                    : '')}},
          },
        },
      }));
    });
    return charts;
  }

  // (d) Speed-up against the baseline: a floating bar over the 95% bootstrap interval, a tick
  // at the estimate; lines at 1 (the baseline) and at the speed-up that counts.
  function plotSpeedup(host) {
    const rows = timing.filter((row) => row.arms.some((a) => a.speedup != null));
    const datasets = [];
    let lo = 1, hi = Math.max(1, minSpeedup);
    timedArms.forEach((arm) => {
      if (arm === baseline) return;
      const data = [], estimate = [];
      rows.forEach((row) => {
        const a = armRow(row, arm);
        const ok = a && a.speedup != null;
        data.push(ok ? [a.speedup_lo, a.speedup_hi] : null);
        estimate.push(ok ? a.speedup : null);
        if (ok) {
          lo = Math.min(lo, a.speedup_lo);
          hi = Math.max(hi, a.speedup_hi);
        }
      });
      if (data.every((v) => v == null)) return;
      datasets.push({label: arm, data, kqEstimate: estimate,
                     backgroundColor: faint(colour(arm), '66'), borderColor: colour(arm),
                     borderWidth: 1, borderSkipped: false});
    });
    const estimateTicks = {
      id: 'kqEstimateTicks',
      afterDatasetsDraw(chart) {
        const {ctx, scales} = chart;
        chart.data.datasets.forEach((ds, i) => {
          if (!chart.isDatasetVisible(i)) return;
          chart.getDatasetMeta(i).data.forEach((bar, j) => {
            const r = ds.kqEstimate[j];
            if (r == null) return;
            const {x, width} = bar.getProps(['x', 'width'], true);
            const y = scales.y.getPixelForValue(r);
            ctx.save();
            ctx.strokeStyle = ds.borderColor;
            ctx.lineWidth = 3;
            ctx.beginPath();
            ctx.moveTo(x - width / 2, y);
            ctx.lineTo(x + width / 2, y);
            ctx.stroke();
            ctx.restore();
          });
        });
      },
    };
    // Round bounds, 0.05 apart, around every interval, 1 and the speed-up that counts.
    const pad = Math.max(0.01, (hi - lo) * 0.05);
    lo = Math.floor((lo - pad) * 20) / 20;
    hi = Math.ceil((hi + pad) * 20) / 20;
    const canvas = newCanvas(host, 460);
    return new Chart(canvas, {
      type: 'bar',
      data: {labels: rows.map((r) => whereLabel(r.size)), datasets},
      plugins: [referenceLines, estimateTicks],
      options: {
        scales: {
          x: {title: axisTitle(shaped ? 'point' : 'size')},
          y: {min: lo, max: hi,
              title: axisTitle('speed-up vs ' + baseline + ' (× = baseline median / arm median)'),
              ticks: {callback: (v) => v.toFixed(2) + '×'}},
        },
        plugins: {
          kqReferenceLines: {lines: [
            {y: 1, label: '1× = ' + baseline + ' (baseline)', colour: '#000'},
            {y: minSpeedup, label: minSpeedup.toFixed(2) + '×: the speed-up that counts',
             dash: [6, 4], colour: '#555'},
          ]},
          legend: {position: 'right'},
          tooltip: {callbacks: {label: (c) => {
            const e = c.dataset.kqEstimate[c.dataIndex];
            const [l, h] = c.raw;
            return c.dataset.label + ': ' + e.toFixed(3) + '× (95% interval ' + l.toFixed(3) +
                   '–' + h.toFixed(3) + ')';
          }}},
        },
      },
    });
  }

  const plotters = {time: plotTime, light: plotLight, rounds: plotRounds, speedup: plotSpeedup};
  const drawn = {};
  document.querySelectorAll('section.plot[data-plot]').forEach((section) => {
    const name = section.dataset.plot;
    const host = section.querySelector('.chart-host');
    try {
      if (!plotters[name]) throw new Error('no plotter');
      const r = plotters[name](host);
      drawn[name] = Array.isArray(r) ? r : [r];
    } catch (e) {
      errors.push(name + ': ' + e.message);
    }
  });
  // Every expected plot drew its charts, and each chart laid out a non-empty dataset.
  const expected =
    [...document.querySelectorAll('section.plot[data-plot]')].map((s) => s.dataset.plot);
  expected.forEach((name) => {
    const charts = drawn[name];
    if (!charts) return;  // its error is already listed
    if (!charts.length) errors.push(name + ': no chart');
    charts.forEach((c, k) => {
      const ok = c instanceof Chart && c.data.datasets.some((d, i) =>
        d.data.some((v) => v != null) && c.getDatasetMeta(i).data.length > 0);
      if (!ok) errors.push(name + ' (chart ' + (k + 1) + '): no data drawn');
    });
  });
  if (errors.length) {
    fail(errors.join('; '));
    return;
  }
  const marker = document.createElement('div');
  marker.id = 'kq-plots-ready';
  marker.dataset.count = String(expected.length);
  marker.dataset.charts = String(Object.values(drawn).reduce((n, cs) => n + cs.length, 0));
  marker.hidden = true;
  document.body.appendChild(marker);
  const v = document.getElementById('chartjs-version');
  if (v) v.textContent = Chart.version;
})();
