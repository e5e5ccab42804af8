sap.ui.define([
  "cag/portal/model/analytics/catalogue",
  "cag/portal/model/analytics/format"
], function (catalogue, format) {
  "use strict";

  /**
   * Chart.js configurations for the analytics page, built from the service's answers: a chain's
   * series as a line (or bars), both chains side by side, anomalies marked on their series, and
   * histograms. When the two chains count in different units (fees: lovelace and DUST) each gets
   * its own axis.
   */
  var ANOMALY = "#d20a0a";

  function value(point) { return format.known(point && point.value) ? Number(point.value) : null; }

  /** A unit short enough for an axis title ("DUST (smallest unit)" → "DUST"). */
  function short(unit) { return String(unit || "").replace(/\s*\(.*\)$/, ""); }

  function axes(twoUnits, unitA, unitB, beginAtZero) {
    var scales = { x: { ticks: { autoSkip: true, maxRotation: 0 } } };
    if (!twoUnits) {
      scales.y = { beginAtZero: beginAtZero !== false, ticks: { callback: function (tick) { return format.figure(tick); } } };
      return scales;
    }
    scales.y = { position: "left", beginAtZero: true, title: { display: true, text: "Chain A: " + short(unitA) }, ticks: { callback: function (tick) { return format.figure(tick); } } };
    scales.y1 = { position: "right", beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: "Chain B: " + short(unitB) }, ticks: { callback: function (tick) { return format.figure(tick); } } };
    return scales;
  }

  function tooltip(unitOf) {
    return {
      callbacks: {
        label: function (item) {
          var unit = unitOf(item.dataset);
          return item.dataset.label + ": " + format.full(item.parsed.y) + (unit ? " " + unit : "");
        }
      }
    };
  }

  /**
   * Both chains' figures of one metric over a window (each a ChainFigure with its series), as
   * lines (key figures) or bars side by side (compare). `feeUnits` maps a chain to its fee unit.
   */
  function chainSeries(figures, resolution, options) {
    options = options || {};
    var type = options.type || "line";
    var shown = figures.filter(Boolean);
    var labelled = shown.filter(function (entry) { return (entry.series || []).length; })[0];
    var labels = labelled ? labelled.series.map(function (point) { return format.bucket(point.bucketStart, resolution); }) : [];
    var units = shown.map(function (entry) { return format.unit(entry.unit, (options.feeUnits || {})[entry.chain]); });
    var twoUnits = shown.length === 2 && units[0] !== units[1] && shown[0].unit === "fee unit";
    var datasets = shown.map(function (entry, i) {
      var chain = catalogue.chain(entry.chain);
      return {
        label: chain.name + " (" + chain.product + ")" + (entry.available === false ? ": not on this chain" : ""),
        chain: entry.chain,
        unit: units[i],
        data: (entry.series || []).map(value),
        borderColor: chain.color,
        backgroundColor: type === "bar" ? chain.color : chain.fill,
        borderWidth: type === "bar" ? 0 : 2,
        pointRadius: labels.length > 31 ? 0 : 2,
        tension: 0.25,
        fill: false,
        spanGaps: true,
        yAxisID: twoUnits && i === 1 ? "y1" : "y"
      };
    });
    return {
      type: type,
      data: { labels: labels, datasets: datasets },
      options: {
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { display: options.legend !== false, position: "bottom" }, tooltip: tooltip(function (dataset) { return dataset.unit; }) },
        scales: axes(twoUnits, units[0], units[1])
      }
    };
  }

  /** The daily table's rows of one metric as bars per day, a dataset per chain. */
  function daily(rows, metricName, feeUnits) {
    var days = [];
    rows.forEach(function (row) { if (days.indexOf(row.day) < 0) days.push(row.day); });
    days.sort();
    var metric = catalogue.metric(metricName) || { unit: "" };
    var chains = ["chain-a", "chain-b"].filter(function (chain) { return rows.some(function (row) { return row.chain === chain && row.metric === metricName; }); });
    var units = chains.map(function (chain) { return format.unit(metric.unit, (feeUnits || {})[chain]); });
    var twoUnits = chains.length === 2 && metric.unit === "fee unit" && units[0] !== units[1];
    return {
      type: "bar",
      data: {
        labels: days.map(function (day) { return day.slice(5); }),
        datasets: chains.map(function (chain, i) {
          var info = catalogue.chain(chain);
          return {
            label: info.name + " (" + info.product + ")",
            unit: units[i],
            data: days.map(function (day) {
              var row = rows.filter(function (entry) { return entry.chain === chain && entry.metric === metricName && entry.day === day; })[0];
              return row ? value(row) : null;
            }),
            backgroundColor: info.color,
            yAxisID: twoUnits && i === 1 ? "y1" : "y"
          };
        })
      },
      options: {
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { position: "bottom" }, tooltip: tooltip(function (dataset) { return dataset.unit; }) },
        scales: axes(twoUnits, units[0], units[1])
      }
    };
  }

  /** Each chain's buckets of the window as a line, its baseline median dashed, anomalies marked. */
  function anomalies(answer) {
    var points = answer.points || [];
    var starts = [];
    points.forEach(function (point) { if (starts.indexOf(point.bucketStart) < 0) starts.push(point.bucketStart); });
    starts.sort();
    var labels = starts.map(function (start) { return format.bucket(start, answer.resolution); });
    var datasets = [];
    ["chain-a", "chain-b"].forEach(function (chain) {
      var own = points.filter(function (point) { return point.chain === chain; });
      if (!own.length) return;
      var info = catalogue.chain(chain);
      var at = function (start) { return own.filter(function (point) { return point.bucketStart === start; })[0]; };
      datasets.push({
        label: info.name, data: starts.map(function (start) { return value(at(start)); }),
        borderColor: info.color, backgroundColor: info.fill, borderWidth: 2, pointRadius: starts.length > 31 ? 1 : 3, tension: 0.2, spanGaps: false
      });
      datasets.push({
        label: info.name + " baseline median", data: starts.map(function (start) { var point = at(start); return point && format.known(point.baselineMedian) ? Number(point.baselineMedian) : null; }),
        borderColor: info.color, borderDash: [6, 4], borderWidth: 1, pointRadius: 0, fill: false
      });
      datasets.push({
        label: info.name + " anomalies", anomalies: true,
        data: starts.map(function (start) { var point = at(start); return point && point.anomaly ? value(point) : null; }),
        showLine: false, pointStyle: "triangle", pointRadius: 8, pointHoverRadius: 10, borderColor: ANOMALY, backgroundColor: ANOMALY
      });
    });
    return {
      type: "line",
      data: { labels: labels, datasets: datasets },
      options: {
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { position: "bottom" } },
        scales: axes(false)
      }
    };
  }

  /** One chain's histogram (bins [lower, upper)). */
  function histogram(figure) {
    var info = catalogue.chain(figure.chain);
    var bins = figure.bins || [];
    return {
      type: "bar",
      data: {
        labels: bins.map(function (bin) { return format.figure(bin.lower) + "–" + format.figure(bin.upper); }),
        datasets: [{ label: info.name + ": transactions or pools per bin", data: bins.map(function (bin) { return bin.count; }), backgroundColor: info.color }]
      },
      options: { plugins: { legend: { display: false } }, scales: { x: { ticks: { maxRotation: 45 } }, y: { beginAtZero: true, ticks: { precision: 0 } } } }
    };
  }

  return { chainSeries: chainSeries, daily: daily, anomalies: anomalies, histogram: histogram, ANOMALY: ANOMALY };
});
