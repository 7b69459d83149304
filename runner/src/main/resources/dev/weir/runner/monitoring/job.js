// The live job page: polls /api/job every second, keeps five minutes of history in the browser,
// and draws it with Apache ECharts (SVG renderer, so that labels are in the DOM). Rates are the
// difference of two successive cumulative counters over the wall time between them. The body's
// data-updates counts successful polls and data-render-status says "ok" once every chart drew.
(function () {
  'use strict';
  var POLL_MS = 1000;
  var HISTORY_MS = 5 * 60 * 1000;
  var PHASES = ['process_envelopes', 'mailbox', 'fire_timers', 'drain_outboxes', 'tick', 'commit', 'seal', 'idle'];
  var PHASE_COLORS = ['#2f6fb0', '#0f8a8a', '#7b61c4', '#c05621', '#718096', '#2f855a', '#b7791f', '#cbd2d9'];

  var charts = {};
  ['graph', 'rates', 'lag', 'phases', 'checkpoints'].forEach(function (id) {
    charts[id] = echarts.init(document.getElementById(id), null, { renderer: 'svg' });
  });
  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (k) { charts[k].resize(); });
  });

  var previous = null;       // the last document
  var history = [];          // [{t, rates: {stage: ev/s}, lags: {stage: s}}]
  var updates = 0;

  function fmt(n, digits) {
    if (n === null || n === undefined || isNaN(n)) { return '–'; }
    var a = Math.abs(n);
    if (a >= 1e9) { return (n / 1e9).toFixed(2) + 'G'; }
    if (a >= 1e6) { return (n / 1e6).toFixed(2) + 'M'; }
    if (a >= 1e4) { return (n / 1e3).toFixed(1) + 'K'; }
    return n.toFixed(digits === undefined ? 0 : digits);
  }
  function bytes(n) {
    if (!n) { return '0 B'; }
    var units = ['B', 'KB', 'MB', 'GB', 'TB'];
    var i = Math.min(units.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
    return (n / Math.pow(1024, i)).toFixed(i ? 1 : 0) + ' ' + units[i];
  }
  function duration(ms) {
    if (ms === null || ms === undefined) { return '–'; }
    if (ms < 1000) { return ms.toFixed(0) + ' ms'; }
    var s = ms / 1000;
    if (s < 120) { return s.toFixed(1) + ' s'; }
    if (s < 7200) { return (s / 60).toFixed(1) + ' min'; }
    return (s / 3600).toFixed(1) + ' h';
  }
  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function rate(now, before, field, dtSec) {
    if (!before || dtSec <= 0) { return null; }
    return Math.max(0, (now[field] - before[field]) / dtSec);
  }
  function byName(list) {
    var m = {};
    (list || []).forEach(function (x) { m[x.name !== undefined ? x.name : x.id] = x; });
    return m;
  }

  function tiles(doc, dt) {
    var prevStages = previous ? byName(previous.stages) : {};
    var sources = doc.stages.filter(function (s) { return s.source; });
    var inRate = 0, known = !!previous;
    sources.forEach(function (s) { inRate += rate(s, prevStages[s.name], 'eventsIn', dt) || 0; });
    var maxLag = null;
    doc.stages.forEach(function (s) {
      if (s.inputWatermarkMs !== null) {
        var lag = Math.max(0, (doc.nowMs - s.inputWatermarkMs) / 1000); // a source's watermark may lead the clock by a hair
        maxLag = maxLag === null ? lag : Math.max(maxLag, lag);
      }
    });
    var fill = 0;
    doc.streams.forEach(function (st) { fill = Math.max(fill, st.capacity ? st.maxQueued / st.capacity : 0); });
    var util = 0;
    doc.containers.forEach(function (c) { util += c.utilization; });
    util = doc.containers.length ? util / doc.containers.length : 0;
    var hits = 0, misses = 0;
    doc.containers.forEach(function (c) { if (c.cache) { hits += c.cache.hits; misses += c.cache.misses; } });
    var cp = doc.checkpoints;
    var items = [
      ['Source events / s', known ? fmt(inRate) : '…', sources.length + ' source stage(s)', 'tile-source-rate'],
      ['Events read so far', fmt(sources.reduce(function (a, s) { return a + s.eventsIn; }, 0)), 'over all source tasks', 'tile-source-total'],
      ['Max watermark lag', maxLag === null ? 'none yet' : duration(maxLag * 1000), 'input watermark behind wall time', 'tile-lag'],
      ['Back-pressure', (fill * 100).toFixed(0) + '%', 'fullest stream partition', 'tile-backpressure'],
      ['Run-loop utilization', (util * 100).toFixed(0) + '%', doc.containers.length + ' container(s), since start', 'tile-utilization'],
      ['Checkpoints', String(cp.completed), cp.completed ? 'last ' + duration(cp.lastPauseNs / 1e6) + ', ' + bytes(cp.lastSizeBytes) : 'none completed', 'tile-checkpoints'],
      ['Object cache hit rate', hits + misses ? (100 * hits / (hits + misses)).toFixed(1) + '%' : '–', fmt(hits + misses) + ' lookups', 'tile-cache']
    ];
    document.getElementById('tiles').innerHTML = items.map(function (t) {
      return '<div class="tile" id="' + t[3] + '"><div class="label">' + esc(t[0]) + '</div><div class="value">'
        + esc(t[1]) + '</div><div class="sub">' + esc(t[2]) + '</div></div>';
    }).join('');
  }

  function graph(doc, stageRates) {
    // Columns by longest path from a source stage, rows by order within a column.
    var depth = {};
    doc.stages.forEach(function (s) { depth[s.name] = 0; });
    for (var pass = 0; pass < doc.stages.length; pass++) {
      doc.streams.forEach(function (st) { depth[st.to] = Math.max(depth[st.to], depth[st.from] + 1); });
    }
    var rows = {};
    var nodes = doc.stages.map(function (s) {
      var d = depth[s.name];
      var row = rows[d] = (rows[d] || 0) + 1;
      var r = stageRates[s.name];
      var first = s.transforms.length ? s.transforms[0] : s.name;
      return {
        name: s.name, x: d * 260, y: row * 90,
        value: r,
        label: { formatter: s.name + ' ×' + s.partitions + '\n' + (r === null || r === undefined ? '…' : fmt(r)) + ' ev/s' },
        tooltip: { formatter: '<b>' + esc(s.name) + '</b> (' + s.partitions + ' partitions)<br>'
          + s.transforms.map(esc).join('<br>') },
        itemStyle: { color: s.source ? '#2f6fb0' : '#486581' },
        first: first
      };
    });
    var links = doc.streams.map(function (st) {
      var fill = st.capacity ? st.maxQueued / st.capacity : 0;
      var color = fill > 0.8 ? '#c53030' : fill > 0.3 ? '#b7791f' : '#9fb3c8';
      return {
        source: st.from, target: st.to,
        lineStyle: { color: color, width: 2 + 4 * fill, curveness: st.from === st.to ? 0.3 : 0.1 },
        label: { show: true, formatter: st.kind.toLowerCase() + ' · ' + (fill * 100).toFixed(0) + '% full', fontSize: 11 }
      };
    });
    charts.graph.setOption({
      tooltip: {},
      series: [{
        type: 'graph', layout: 'none', roam: true, symbol: 'roundRect', symbolSize: [180, 60],
        label: { show: true, color: '#fff', fontSize: 12, lineHeight: 18 },
        edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 9,
        data: nodes, links: links
      }]
    }, true);
  }

  function lines(chart, series, unit, axisFormat) {
    var names = {};
    history.forEach(function (h) { Object.keys(h[series]).forEach(function (n) { names[n] = true; }); });
    var list = Object.keys(names);
    chart.setOption({
      tooltip: { trigger: 'axis' },
      legend: { type: 'scroll', top: 0 },
      grid: { left: 56, right: 16, top: 36, bottom: 28 },
      xAxis: { type: 'time' },
      yAxis: { type: 'value', name: unit, axisLabel: { formatter: axisFormat } },
      series: list.map(function (n) {
        return {
          name: n, type: 'line', showSymbol: false,
          data: history.filter(function (h) { return h[series][n] !== undefined; })
            .map(function (h) { return [h.t, h[series][n]]; })
        };
      })
    }, true);
  }

  function phases(doc, dt) {
    var prev = previous ? byName(previous.containers) : {};
    var names = doc.containers.map(function (c) { return 'container-' + c.id; });
    var shares = doc.containers.map(function (c) {
      var p = prev[c.id];
      var deltas = PHASES.map(function (ph) { return Math.max(0, c.phaseNs[ph] - (p ? p.phaseNs[ph] : 0)); });
      var total = deltas.reduce(function (a, b) { return a + b; }, 0);
      return deltas.map(function (d) { return total ? 100 * d / total : 0; });
    });
    charts.phases.setOption({
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return v.toFixed(1) + '%'; } },
      legend: { top: 0 },
      grid: { left: 96, right: 16, top: 36, bottom: 24 },
      xAxis: { type: 'value', max: 100, axisLabel: { formatter: '{value}%' } },
      yAxis: { type: 'category', data: names },
      series: PHASES.map(function (ph, i) {
        return { name: ph.replace('_', ' '), type: 'bar', stack: 'time', itemStyle: { color: PHASE_COLORS[i] },
          data: shares.map(function (s) { return +s[i].toFixed(2); }) };
      })
    }, true);
  }

  function checkpoints(doc) {
    var recent = doc.checkpoints.recent;
    charts.checkpoints.setOption({
      title: recent.length ? undefined : { text: 'No checkpoint completed yet', left: 'center', top: 'middle',
        textStyle: { color: '#616e7c', fontSize: 13, fontWeight: 'normal' } },
      tooltip: { trigger: 'axis' },
      legend: { top: 0 },
      grid: { left: 56, right: 64, top: 36, bottom: 28 },
      xAxis: { type: 'category', data: recent.map(function (c) { return '#' + c.id; }) },
      yAxis: [{ type: 'value', name: 'pause ms' }, { type: 'value', name: 'MB', position: 'right' }],
      series: [
        { name: 'pause (ms)', type: 'bar', data: recent.map(function (c) { return +(c.pauseNs / 1e6).toFixed(1); }) },
        { name: 'size (MB)', type: 'line', yAxisIndex: 1, data: recent.map(function (c) { return +(c.sizeBytes / 1048576).toFixed(2); }) }
      ]
    }, true);
  }

  function stageTable(doc, dt) {
    var prevStages = previous ? byName(previous.stages) : {};
    var rows = ['<tr><th>Stage / task</th><th>container</th><th>in / s</th><th>out / s</th><th>events in</th>'
      + '<th>input watermark lag</th><th>output watermark</th></tr>'];
    doc.stages.forEach(function (s) {
      var ps = prevStages[s.name];
      rows.push('<tr class="stage" data-stage="' + esc(s.name) + '"><td class="name">' + esc(s.name) + ' <span class="fused">'
        + esc(s.transforms.join(' → ')) + '</span></td><td></td><td>' + fmt(rate(s, ps, 'eventsIn', dt)) + '</td><td>'
        + fmt(rate(s, ps, 'eventsOut', dt)) + '</td><td>' + fmt(s.eventsIn) + '</td><td>'
        + (s.inputWatermarkMs === null ? '–' : duration(Math.max(0, doc.nowMs - s.inputWatermarkMs))) + '</td><td>'
        + (s.outputWatermarkMs === null ? '–' : new Date(s.outputWatermarkMs).toISOString().substring(11, 19)) + '</td></tr>');
      var pt = ps ? byName(ps.tasks) : {};
      s.tasks.forEach(function (t) {
        rows.push('<tr><td class="name">&nbsp;&nbsp;' + esc(t.name) + '</td><td>' + t.container + '</td><td>'
          + fmt(rate(t, pt[t.name], 'eventsIn', dt)) + '</td><td>' + fmt(rate(t, pt[t.name], 'eventsOut', dt)) + '</td><td>'
          + fmt(t.eventsIn) + '</td><td>' + (t.inputWatermarkMs === null ? '–' : duration(Math.max(0, doc.nowMs - t.inputWatermarkMs)))
          + '</td><td>' + (t.outputWatermarkMs === null ? '–' : new Date(t.outputWatermarkMs).toISOString().substring(11, 19))
          + '</td></tr>');
      });
    });
    document.getElementById('stages').innerHTML = rows.join('');
  }

  function transformTable(doc, dt) {
    var prev = previous ? byName(previous.transforms) : {};
    if (!doc.metricsEnabled) {
      document.getElementById('transforms').innerHTML = '<tr><td>Metrics are off (--metricsEnabled=false).</td></tr>';
      return;
    }
    var rows = ['<tr><th>PTransform</th><th>in / s</th><th>elements in</th><th>elements out</th><th>Beam metrics</th></tr>'];
    doc.transforms.forEach(function (t) {
      var m = Object.keys(t.metrics).map(function (k) { return esc(k) + ' = ' + fmt(t.metrics[k]); }).join('<br>');
      rows.push('<tr data-transform="' + esc(t.name) + '"><td class="name">' + esc(t.name) + '</td><td>' + fmt(rate(t, prev[t.name], 'in', dt))
        + '</td><td>' + fmt(t.in) + '</td><td>' + fmt(t.out) + '</td><td>' + (m || '–') + '</td></tr>');
    });
    document.getElementById('transforms').innerHTML = rows.join('');
  }

  function cacheTable(doc) {
    var rows = ['<tr><th>Container</th><th>hit rate</th><th>entries</th><th>size</th><th>dirty</th><th>evictions</th></tr>'];
    doc.containers.forEach(function (c) {
      var k = c.cache;
      rows.push('<tr><td>container-' + c.id + ' (' + c.tasks + ' tasks)</td>' + (k
        ? '<td>' + (k.hits + k.misses ? (100 * k.hitRate).toFixed(1) + '%' : '–') + '</td><td>' + fmt(k.entries) + '</td><td>'
          + bytes(k.estimatedBytes) + '</td><td>' + fmt(k.dirtyEntries) + '</td><td>' + fmt(k.evictions) + '</td>'
        : '<td colspan="5">no state opened</td>') + '</tr>');
    });
    document.getElementById('cache').innerHTML = rows.join('');
  }

  function render(doc) {
    var dt = previous ? (doc.nowMs - previous.nowMs) / 1000 : 0;
    var prevStages = previous ? byName(previous.stages) : {};
    var stageRates = {}, lags = {};
    doc.stages.forEach(function (s) {
      stageRates[s.name] = rate(s, prevStages[s.name], 'eventsIn', dt);
      if (s.inputWatermarkMs !== null) { lags[s.name] = Math.max(0, (doc.nowMs - s.inputWatermarkMs) / 1000); }
    });
    if (previous) {
      var rates = {};
      Object.keys(stageRates).forEach(function (n) { if (stageRates[n] !== null) { rates[n] = stageRates[n]; } });
      history.push({ t: doc.nowMs, rates: rates, lags: lags });
      while (history.length && history[0].t < doc.nowMs - HISTORY_MS) { history.shift(); }
    }
    document.getElementById('job').textContent = doc.job;
    document.title = doc.job + ' · Weir';
    document.getElementById('meta').textContent = 'up ' + duration(doc.nowMs - doc.startTimeMs) + ' · '
      + doc.stages.length + ' stages · ' + doc.containers.length + ' containers · state ' + doc.stateBackend;
    tiles(doc, dt);
    graph(doc, stageRates);
    lines(charts.rates, 'rates', 'events/s', function (v) { return fmt(v); });
    lines(charts.lag, 'lags', 'lag', function (v) { return duration(v * 1000); });
    phases(doc, dt);
    checkpoints(doc);
    stageTable(doc, dt);
    transformTable(doc, dt);
    cacheTable(doc);
    previous = doc;
  }

  function poll() {
    fetch('api/job', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.json(); })
      .then(function (doc) {
        render(doc);
        updates++;
        document.body.dataset.updates = String(updates);
        var drawn = document.querySelectorAll('.chart svg').length;
        document.body.dataset.renderStatus = drawn === Object.keys(charts).length ? 'ok' : 'partial:' + drawn;
        var status = document.getElementById('status');
        status.className = 'live';
        status.textContent = 'live · updated ' + new Date(doc.nowMs).toLocaleTimeString();
      })
      .catch(function (e) {
        var status = document.getElementById('status');
        status.className = 'down';
        status.textContent = 'no answer from the job (it may have ended): ' + e.message;
        document.body.dataset.renderStatus = 'error:' + e.message;
      })
      .then(function () { setTimeout(poll, POLL_MS); });
  }
  poll();
}());
