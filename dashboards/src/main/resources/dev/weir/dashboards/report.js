// Draws the report's charts with Apache ECharts (SVG renderer, no animation) from window.WEIR_REPORT,
// wires the log-scale toggle, and records a render self-check on <body> for the browser test.
(function () {
  'use strict';
  var data = window.WEIR_REPORT;
  var PALETTE = { weir: '#d9480f', 'weir-samza': '#f59f00', 'flink-tuned': '#1864ab', 'flink-tuned-rocksdb': '#4dabf7', flink: '#74c0fc', direct: '#2f9e44', bare: '#868e96' };
  var EXTRA = ['#7048e8', '#e64980', '#0c8599', '#5c940d'];
  var charts = [];
  var throughputCharts = [];
  var logScale = false;

  function color(runner, i) { return PALETTE[runner] || EXTRA[i % EXTRA.length]; }
  function fmt(v) {
    if (v == null || v === '-' || isNaN(v)) { return '–'; }
    if (v >= 1e6) { return (v / 1e6).toFixed(2) + 'M'; }
    if (v >= 1e3) { return (v / 1e3).toFixed(v >= 1e4 ? 0 : 1) + 'K'; }
    return Math.round(v).toString();
  }
  function values(list) { return list.map(function (v) { return v == null ? '-' : v; }); }
  function chartIn(el) {
    var c = echarts.init(el, null, { renderer: 'svg' });
    charts.push(c);
    return c;
  }
  function smallChart(parent, id) {
    var el = document.createElement('div');
    el.className = 'chart';
    el.id = id;
    parent.appendChild(el);
    return chartIn(el);
  }

  function throughputOption(t) {
    return {
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: fmt },
      legend: { top: 0 },
      grid: { left: 72, right: 24, top: 40, bottom: 36 },
      xAxis: { type: 'category', data: t.queries, axisLabel: { interval: 0 } },
      yAxis: { type: logScale ? 'log' : 'value', name: 'events/s', axisLabel: { formatter: fmt } },
      series: Object.keys(t.series).map(function (runner, i) {
        // The legend names each runner's Beam release where the results have it: "weir (Beam 2.73.0)".
        var name = (t.labels && t.labels[runner]) || runner;
        return { name: name, type: 'bar', data: values(t.series[runner]), itemStyle: { color: color(runner, i) } };
      })
    };
  }

  function lineOption(title, xs, series, xName) {
    return {
      animation: false,
      title: { text: title, left: 8, top: 4, textStyle: { fontSize: 13 } },
      tooltip: { trigger: 'axis', valueFormatter: fmt },
      legend: { top: 4, right: 8, textStyle: { fontSize: 11 } },
      grid: { left: 56, right: 16, top: 40, bottom: 30 },
      xAxis: { type: 'category', data: xs, name: xName || '', axisLabel: { fontSize: 10, hideOverlap: true } },
      yAxis: { type: 'value', axisLabel: { formatter: fmt, fontSize: 10 } },
      series: Object.keys(series).map(function (runner, i) {
        return { name: runner, type: 'line', connectNulls: false, symbolSize: 6,
                 data: values(series[runner]), itemStyle: { color: color(runner, i) } };
      })
    };
  }

  data.throughput.forEach(function (t) {
    var el = document.getElementById(t.id);
    if (!el) { return; }
    var c = chartIn(el);
    c.setOption(throughputOption(t));
    throughputCharts.push({ chart: c, spec: t });
  });

  var history = document.getElementById('history');
  if (history) {
    data.history.forEach(function (h, i) {
      smallChart(history, 'history-' + i).setOption(lineOption(h.title, h.labels, h.series));
    });
  }
  var sweeps = document.getElementById('sweeps');
  if (sweeps) {
    data.sweeps.forEach(function (s, i) {
      smallChart(sweeps, 'sweep-' + i).setOption(lineOption(s.title, s.values, s.series, s.option));
    });
  }

  // Latency: p99 per query and runner, ms, on a log axis (a runner that falls behind is orders of
  // magnitude later than one that keeps up).
  if (data.latency) {
    var lat = document.getElementById(data.latency.id);
    if (lat) {
      chartIn(lat).setOption({
        animation: false,
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' },
                   valueFormatter: function (v) { return v == null ? '–' : Math.round(v) + ' ms'; } },
        legend: { top: 0 },
        grid: { left: 72, right: 24, top: 40, bottom: 36 },
        xAxis: { type: 'category', data: data.latency.queries, axisLabel: { interval: 0 } },
        yAxis: { type: 'log', name: 'p99, ms', min: 1 },
        series: Object.keys(data.latency.series).map(function (runner, i) {
          return { name: runner, type: 'bar', data: values(data.latency.series[runner]).map(function (v) {
            return v === '-' ? v : Math.max(1, v); }), itemStyle: { color: color(runner, i) } };
        })
      });
    }
  }

  var toggle = document.getElementById('log-toggle');
  if (toggle) {
    toggle.setAttribute('aria-pressed', 'false');
    toggle.addEventListener('click', function () {
      logScale = !logScale;
      toggle.setAttribute('aria-pressed', String(logScale));
      throughputCharts.forEach(function (t) { t.chart.setOption(throughputOption(t.spec), true); });
    });
  }
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.resize(); }); });

  // Self-check, read by the headless-browser test: every chart drew shapes, and the query labels
  // of the throughput charts are present as SVG text.
  var status = { charts: charts.length, blank: [], labels: [] };
  document.querySelectorAll('.chart').forEach(function (el) {
    var svg = el.querySelector('svg');
    if (!svg || svg.querySelectorAll('path, rect').length < 4) { status.blank.push(el.id); }
  });
  throughputCharts.forEach(function (t) {
    var texts = Array.prototype.map.call(
      document.getElementById(t.spec.id).querySelectorAll('svg text'), function (n) { return n.textContent; });
    t.spec.queries.forEach(function (q) { if (texts.indexOf(q) < 0) { status.blank.push(t.spec.id + ':' + q); } });
    status.labels = status.labels.concat(t.spec.queries);
  });
  document.body.setAttribute('data-render-status', status.blank.length === 0 && charts.length > 0 ? 'ok' : 'blank');
  document.body.setAttribute('data-render-detail', JSON.stringify(status));
})();
