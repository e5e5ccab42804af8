sap.ui.define([
  "sap/ui/core/mvc/Controller",
  "sap/ui/model/json/JSONModel",
  "cag/portal/model/session",
  "cag/portal/model/analytics/catalogue",
  "cag/portal/model/analytics/format",
  "cag/portal/model/analytics/charts",
  "cag/portal/model/analytics/reader"
], function (Controller, JSONModel, session, catalogue, format, charts, reader) {
  "use strict";

  var CHAIN_KEYS = ["chain-a", "chain-b"];
  var SYNC_STATES = { synced: "Success", syncing: "Warning", "catching-up": "Warning", paused: "Warning", error: "Error", stalled: "Error" };
  /** The sections read over the window chosen (a section is read again when its parameters change), and the method reading each. */
  var WINDOWED = { keyFigures: true, compare: true, rankings: true, anomalies: true, concentration: true };
  var LOADERS = { overview: "loadOverview", keyFigures: "loadKeyFigures", compare: "loadCompare", daily: "loadDaily", rankings: "loadRankings",
    anomalies: "loadAnomalies", concentration: "loadConcentration" };

  function side(figure, feeUnits) {
    var chain = catalogue.chain(figure ? figure.chain : "");
    if (!figure) return { name: chain.name, value: format.NONE, unit: "", exact: "", change: "", state: "None" };
    var unit = format.unit(figure.unit, feeUnits[figure.chain]);
    if (figure.available === false) return { name: chain.name, value: "n/a", unit: "", exact: figure.note || "", change: figure.note || "not on this chain", state: "None" };
    return {
      name: chain.name + " (" + chain.product + ")",
      value: format.figure(figure.value, figure.unit),
      unit: unit,
      exact: format.full(figure.value) + (unit ? " " + unit : "") + (figure.note ? " · " + figure.note : ""),
      change: figure.note && !format.known(figure.previous) ? figure.note : format.change(figure.changePercent, figure.previous),
      state: format.known(figure.changePercent) && Number(figure.changePercent) !== 0 ? "Information" : "None"
    };
  }

  /**
   * Analytics of both chains through the analytics OData V4 service: where each chain stands now,
   * the key figures of a window with their series, one metric compared across both chains, daily
   * tables, rankings, anomalies, concentration and distributions. The window selector drives every
   * windowed figure; each tab reads its functions when it is first shown (every read costs units).
   */
  return Controller.extend("cag.portal.controller.Analytics", {
    onInit: function () {
      this.view = new JSONModel({
        window: "1h", windows: catalogue.WINDOWS, span: "", tab: "keyFigures", message: {},
        metrics: catalogue.METRICS, anomalyMetrics: catalogue.ANOMALY_METRICS, topics: catalogue.TOPICS,
        rankingChoices: catalogue.RANKINGS, resources: catalogue.RESOURCES, distributionChoices: catalogue.DISTRIBUTIONS,
        busy: {},
        overview: {},
        keyFigures: [],
        compare: { metric: "tx.count", description: "", chart: null, rows: [] },
        daily: { topic: "blocks", days: 7, metric: "", metrics: [], rows: [], chart: null },
        rankings: { ranking: "producers", top: 10, header: "", notes: [], entries: [] },
        anomalies: { metric: "tx.count", onlyFlagged: false, method: "", summary: "", flagged: 0, points: [], rows: [], chart: null },
        concentration: { resource: "blocks", rows: [] },
        distribution: { distribution: "fees", chains: [] }
      });
      this.getView().setModel(this.view, "view");
      this.feeUnits = { "chain-a": "lovelace", "chain-b": "DUST" };
      this.loaded = {};
      this.tokens = {};
      this.active = false;

      var router = this.getOwnerComponent().getRouter();
      router.attachRouteMatched(function (event) {
        this.active = event.getParameter("name") === "analytics";
        if (this.active) this.showCurrent();
      }, this);
      session.onChange(function () {
        this.loaded = {};
        this.say();
        if (this.active) this.showCurrent();
      }.bind(this));
    },

    model: function () { return this.getOwnerComponent().getModel("analytics"); },

    // ---- what to read ------------------------------------------------------------------------

    /** The parameters a section was (or is to be) read with: a change reads it again. */
    signature: function (section) {
      var data = this.view.getData();
      var windowName = WINDOWED[section] ? data.window : "";
      switch (section) {
        case "compare": return windowName + "|" + data.compare.metric;
        case "daily": return data.daily.topic + "|" + data.daily.days;
        case "rankings": return windowName + "|" + data.rankings.ranking + "|" + data.rankings.top;
        case "anomalies": return windowName + "|" + data.anomalies.metric;
        case "concentration": return windowName + "|" + data.concentration.resource + "|" + data.distribution.distribution;
        default: return windowName;
      }
    },

    /** Reads the overview and the tab shown, each unless it is already read with these parameters. */
    showCurrent: function (force) {
      if (!session.key()) return;
      if (force) this.loaded = {};
      this.ensure("overview");
      this.ensure(this.view.getProperty("/tab"));
    },

    ensure: function (section) {
      var signature = this.signature(section);
      if (this.loaded[section] === signature) return;
      this.loaded[section] = signature;
      var loader = LOADERS[section];
      if (loader) this[loader]();
    },

    /** Calls a function; answers its result, or nothing when a newer read of the section started meanwhile or it failed (said on the page). */
    read: function (section, name, parameters, busyKey) {
      var token = (this.tokens[section] || 0) + 1;
      this.tokens[section] = token;
      busyKey = busyKey || section;
      this.view.setProperty("/busy/" + busyKey, true);
      return reader.read(this.model(), name, parameters).then(function (result) {
        if (this.tokens[section] !== token) return undefined;
        this.view.setProperty("/busy/" + busyKey, false);
        return result;
      }.bind(this), function (error) {
        if (this.tokens[section] !== token) return undefined;
        this.view.setProperty("/busy/" + busyKey, false);
        delete this.loaded[section];
        this.fail(error);
        return undefined;
      }.bind(this));
    },

    fail: function (error) {
      var said = error.message + (error.code ? " (" + error.code + ")" : "");
      if (error.status === 401) this.say("Warning", "This key is not accepted: " + said + ". Get a key on the Keys tab to read analytics.");
      else if (error.status === 402) this.say("Warning", said + " Top up on the Keys tab to read more.");
      else this.say("Error", said);
    },

    say: function (type, text) { this.view.setProperty("/message", text ? { type: type, text: text } : {}); },

    onMessageClose: function () { this.say(); },

    // ---- both chains now ---------------------------------------------------------------------

    loadOverview: function () {
      return this.read("overview", "overview", {}).then(function (answer) {
        if (!answer) return;
        var byChain = {};
        (answer.chains || []).forEach(function (entry) { byChain[entry.chain] = entry; });
        CHAIN_KEYS.forEach(function (chain) { if (byChain[chain] && byChain[chain].feeUnit) this.feeUnits[chain] = byChain[chain].feeUnit; }, this);
        this.view.setProperty("/overview", {
          generatedAt: format.moment(answer.generatedAt),
          a: this.chainOverview("chain-a", byChain["chain-a"]),
          b: this.chainOverview("chain-b", byChain["chain-b"])
        });
      }.bind(this));
    },

    chainOverview: function (chain, entry) {
      var info = catalogue.chain(chain);
      entry = entry || {};
      var figure = function (label, value, unit) {
        return { label: label, value: format.figure(value, unit), unit: unit === "ratio" ? "" : unit || "", tooltip: format.full(value) + (unit ? " " + unit : "") };
      };
      return {
        title: info.name + " · " + info.product,
        network: entry.network || "not indexed yet",
        syncStatus: entry.syncStatus || "unknown",
        syncState: SYNC_STATES[entry.syncStatus] || "None",
        figures: [
          figure("Tip height", entry.tipHeight),
          figure("Indexed height", entry.indexedHeight),
          figure("Finalized height", entry.finalizedHeight >= 0 ? entry.finalizedHeight : null),
          figure("Lag", entry.lagBlocks, "blocks"),
          figure("Epoch", entry.epoch),
          figure("TPS (last hour)", entry.tps, "tx/s"),
          figure("Blocks (24 h)", entry.blocks24h),
          figure("Transactions (24 h)", entry.transactions24h),
          figure("Fees (24 h)", entry.fees24h, entry.feeUnit),
          figure("Active addresses (24 h)", entry.activeAddresses24h),
          figure("Producers (24 h)", entry.producers24h),
          figure("Reorgs (24 h)", entry.reorgs24h)
        ]
      };
    },

    // ---- key figures -------------------------------------------------------------------------

    loadKeyFigures: function () {
      var windowName = this.view.getProperty("/window");
      return this.read("keyFigures", "keyFigures", { window: windowName }).then(function (answer) {
        if (!answer) return;
        this.showSpan(answer);
        var figures = answer.figures || [];
        var of = function (metric, chain) { return figures.filter(function (entry) { return entry.metric === metric && entry.chain === chain; })[0]; };
        var metrics = [];
        figures.forEach(function (entry) { if (metrics.indexOf(entry.metric) < 0) metrics.push(entry.metric); });
        this.view.setProperty("/keyFigures", metrics.map(function (metric) {
          var a = of(metric, "chain-a");
          var b = of(metric, "chain-b");
          var known = catalogue.metric(metric) || { description: "" };
          return {
            metric: metric,
            label: catalogue.KEY_FIGURES[metric] || metric,
            description: known.description,
            a: side(a, this.feeUnits),
            b: side(b, this.feeUnits),
            chart: charts.chainSeries([a, b], answer.resolution, { feeUnits: this.feeUnits })
          };
        }, this));
      }.bind(this));
    },

    /** What the window covers, as the last windowed answer says. */
    showSpan: function (answer) {
      var chosen = catalogue.WINDOWS.filter(function (entry) { return entry.key === answer.window; })[0] || { span: "" };
      this.view.setProperty("/span", "Window " + answer.window + ": " + format.moment(answer.windowStart) + " to " + format.moment(answer.windowEnd) +
        " (" + chosen.span + "), against the window before it (from " + format.moment(answer.previousStart) + ").");
    },

    // ---- compare -----------------------------------------------------------------------------

    loadCompare: function () {
      var data = this.view.getData();
      return this.read("compare", "compare", { metric: data.compare.metric, window: data.window }).then(function (answer) {
        if (!answer) return;
        this.showSpan(answer);
        var chains = answer.chains || [];
        var feeUnits = this.feeUnits;
        this.view.setProperty("/compare/description", answer.metric + ": " + (answer.description || ""));
        this.view.setProperty("/compare/chart", charts.chainSeries(chains, answer.resolution, { type: "bar", feeUnits: feeUnits }));
        this.view.setProperty("/compare/rows", chains.map(function (figure) {
          var info = catalogue.chain(figure.chain);
          var shown = side(figure, feeUnits);
          return {
            chain: figure.chain,
            name: info.name + " (" + info.product + ")",
            network: figure.network || "",
            value: shown.value,
            previous: figure.available === false ? format.NONE : format.figure(figure.previous, figure.unit),
            unit: shown.unit,
            exact: shown.exact,
            change: figure.available === false ? "" : format.change(figure.changePercent, figure.previous),
            state: shown.state,
            note: figure.note || ""
          };
        }));
      }.bind(this));
    },

    onCompare: function () {
      delete this.loaded.compare;
      this.ensure("compare");
    },

    // ---- daily tables ------------------------------------------------------------------------

    loadDaily: function () {
      var daily = this.view.getProperty("/daily");
      var days = Math.max(1, Math.min(90, Math.round(Number(daily.days) || 7)));
      return this.read("daily", "daily", { topic: daily.topic, days: days }).then(function (answer) {
        if (!answer) return;
        var rows = answer.rows || [];
        this.dailyRows = rows;
        var present = (answer.metrics || []).filter(function (metric) { return rows.some(function (row) { return row.metric === metric; }); });
        var feeUnits = this.feeUnits;
        var table = [];
        present.forEach(function (metric, order) {
          var known = catalogue.metric(metric) || { unit: "" };
          var days = [];
          rows.forEach(function (row) { if (row.metric === metric && days.indexOf(row.day) < 0) days.push(row.day); });
          days.forEach(function (day) {
            var at = function (chain) { return rows.filter(function (row) { return row.metric === metric && row.day === day && row.chain === chain; })[0]; };
            var a = at("chain-a");
            var b = at("chain-b");
            table.push({
              metric: metric, order: order, day: day, description: known.description || "",
              a: a ? format.figure(a.value, known.unit) : "n/a", b: b ? format.figure(b.value, known.unit) : "n/a",
              unitA: a ? format.unit(known.unit, feeUnits["chain-a"]) : "", unitB: b ? format.unit(known.unit, feeUnits["chain-b"]) : "",
              exactA: a ? format.full(a.value) : "not on chain A", exactB: b ? format.full(b.value) : "not on chain B",
              complete: (!a || a.complete) && (!b || b.complete)
            });
          });
        });
        var metric = present.indexOf(this.view.getProperty("/daily/metric")) >= 0 ? this.view.getProperty("/daily/metric") : (present[0] || "");
        this.view.setProperty("/daily/metrics", present.map(function (name) { return { key: name }; }));
        this.view.setProperty("/daily/metric", metric);
        this.view.setProperty("/daily/rows", table);
        this.view.setProperty("/daily/chart", charts.daily(rows, metric, feeUnits));
      }.bind(this));
    },

    /** The daily table's rows grouped by metric, in the topic's order. */
    dailyGroup: function (context) {
      var row = context.getObject();
      return { key: row.metric, text: row.metric + ": " + row.description };
    },

    onDailyChange: function () { this.ensure("daily"); },

    onDailyMetricChange: function () {
      this.view.setProperty("/daily/chart", charts.daily(this.dailyRows || [], this.view.getProperty("/daily/metric"), this.feeUnits));
    },

    // ---- rankings ----------------------------------------------------------------------------

    loadRankings: function () {
      var data = this.view.getData();
      var top = Math.max(1, Math.min(100, Math.round(Number(data.rankings.top) || 10)));
      return this.read("rankings", "rankings", { ranking: data.rankings.ranking, window: data.window, top: top }).then(function (answer) {
        if (!answer) return;
        this.view.setProperty("/rankings/header", "Top " + top + " per chain by " + answer.unit + " over " + answer.window + " (" + answer.metric + ")");
        this.view.setProperty("/rankings/notes", answer.notes || []);
        this.view.setProperty("/rankings/entries", (answer.entries || []).map(function (entry) {
          var info = catalogue.chain(entry.chain);
          return {
            name: info.name + " (" + info.product + ")", rank: entry.rank, entity: entry.entity,
            value: format.figure(entry.value), unit: answer.unit, exact: format.full(entry.value) + " " + answer.unit,
            percent: format.known(entry.share) ? Math.round(Number(entry.share) * 1000) / 10 : 0, share: format.share(entry.share)
          };
        }));
      }.bind(this));
    },

    onRankingsChange: function () { this.ensure("rankings"); },

    // ---- anomalies ---------------------------------------------------------------------------

    loadAnomalies: function () {
      var data = this.view.getData();
      return this.read("anomalies", "anomalies", { metric: data.anomalies.metric, window: data.window }).then(function (answer) {
        if (!answer) return;
        var points = answer.points || [];
        var flagged = points.filter(function (point) { return point.anomaly; }).length;
        this.anomalyPoints = points;
        this.anomalyResolution = answer.resolution;
        this.view.setProperty("/anomalies/flagged", flagged);
        this.view.setProperty("/anomalies/summary", flagged + " flagged of " + points.length + " buckets");
        this.view.setProperty("/anomalies/method", (answer.window === "1h" ? "The last complete hour, scored by " : "Each " + answer.resolution + " of the window, scored by ") +
          answer.method + "; flagged above " + answer.threshold + ", with at least " + answer.minPoints + " baseline points.");
        this.view.setProperty("/anomalies/chart", charts.anomalies(answer));
        this.showAnomalyRows();
      }.bind(this));
    },

    showAnomalyRows: function () {
      var onlyFlagged = this.view.getProperty("/anomalies/onlyFlagged");
      var resolution = this.anomalyResolution;
      this.view.setProperty("/anomalies/rows", (this.anomalyPoints || []).filter(function (point) { return !onlyFlagged || point.anomaly; }).map(function (point) {
        var info = catalogue.chain(point.chain);
        return {
          name: info.name,
          bucket: resolution === "day" ? String(point.bucketStart).slice(0, 10) : format.moment(point.bucketStart),
          value: format.figure(point.value), exact: format.full(point.value),
          baseline: format.known(point.baselineMedian) ? format.figure(point.baselineMedian) + " · " + format.figure(point.baselineMad) + " (" + point.baselinePoints + " points)" : format.NONE,
          score: format.known(point.score) ? Number(point.score).toFixed(2) : format.NONE,
          kind: [point.baselineKind, point.note].filter(Boolean).join(": "),
          anomaly: !!point.anomaly
        };
      }));
    },

    onAnomaliesChange: function () { this.ensure("anomalies"); },

    onAnomalyFilter: function () { this.showAnomalyRows(); },

    // ---- concentration and distributions -----------------------------------------------------

    loadConcentration: function () {
      var data = this.view.getData();
      var concentration = this.read("concentration", "concentration", { resource: data.concentration.resource, window: data.window }).then(function (answer) {
        if (!answer) return;
        this.view.setProperty("/concentration/rows", (answer.chains || []).map(function (figure) {
          var info = catalogue.chain(figure.chain);
          var has = figure.available !== false && format.known(figure.entities);
          return {
            name: info.name + " (" + info.product + ")",
            basis: figure.note || figure.basis || "",
            entities: has ? format.full(figure.entities) : format.NONE,
            gini: format.known(figure.gini) ? Number(figure.gini).toFixed(3) : format.NONE,
            nakamoto: format.known(figure.nakamoto) ? String(figure.nakamoto) : format.NONE,
            hhi: format.known(figure.hhi) ? Number(figure.hhi).toFixed(3) : format.NONE,
            top10Share: format.share(figure.top10Share)
          };
        }));
      }.bind(this));
      var distribution = this.read("distribution", "distributions", { distribution: data.distribution.distribution, window: data.window, bins: 10 }).then(function (answer) {
        if (!answer) return;
        this.view.setProperty("/distribution/chains", (answer.chains || []).map(function (figure) {
          var info = catalogue.chain(figure.chain);
          var summary = figure.available === false ? figure.note
            : !figure.count ? "Nothing in this window" + (figure.note ? ": " + figure.note : "")
              : figure.count + " values in " + figure.unit + ": min " + format.figure(figure.min) + ", median " + format.figure(figure.p50) +
                ", p95 " + format.figure(figure.p95) + ", max " + format.figure(figure.max) + ", mean " + format.figure(figure.mean);
          return {
            title: info.name + " (" + info.product + ")",
            summary: summary || "",
            hasBins: !!(figure.bins && figure.bins.length),
            chart: charts.histogram(figure)
          };
        }));
      }.bind(this));
      return Promise.all([concentration, distribution]);
    },

    onConcentrationChange: function () { this.ensure("concentration"); },

    // ---- the window and the tabs -------------------------------------------------------------

    onWindowChange: function () { this.showCurrent(); },

    onTabSelect: function () { this.showCurrent(); },

    onRefresh: function () { this.showCurrent(true); },

    onGoToKeys: function () { this.getOwnerComponent().getRouter().navTo("keys"); }
  });
});
