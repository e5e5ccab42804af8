sap.ui.define([
  "sap/ui/core/Control",
  "chart.js/chart.umd.min"
], function (Control, ChartJs) {
  "use strict";

  /**
   * A Chart.js chart as a UI5 control: `config` is Chart.js's own configuration ({ type, data,
   * options }); setting it again updates the chart in place (its data, then its options).
   */
  return Control.extend("cag.portal.control.Chart", {
    metadata: {
      properties: {
        config: { type: "object" },
        height: { type: "sap.ui.core.CSSSize", defaultValue: "16rem" },
        /** What a screen reader says about the chart. */
        description: { type: "string", defaultValue: "" }
      }
    },

    renderer: {
      apiVersion: 2,
      render: function (rm, control) {
        rm.openStart("div", control).class("cagChart").style("height", control.getHeight()).openEnd();
        rm.openStart("canvas", control.getId() + "-canvas").attr("role", "img").attr("aria-label", control.getDescription()).openEnd().close("canvas");
        rm.close("div");
      }
    },

    setConfig: function (config) {
      // Drawn in place once the chart exists; before that, rendering creates it.
      this.setProperty("config", config, !!this._chart);
      if (this._chart && config) {
        this._chart.data = config.data;
        this._chart.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options);
        this._chart.update();
      }
      return this;
    },

    /** The Chart.js instance, for tests and for reading what is drawn. */
    getChart: function () { return this._chart; },

    onAfterRendering: function () {
      var config = this.getConfig();
      var canvas = this.getDomRef("canvas");
      if (this._chart && this._chart.canvas === canvas) return;
      this._destroyChart();
      if (!config || !canvas) return;
      this._chart = new ChartJs(canvas, {
        type: config.type,
        data: config.data,
        options: Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options)
      });
    },

    exit: function () { this._destroyChart(); },

    _destroyChart: function () {
      if (this._chart) { this._chart.destroy(); this._chart = undefined; }
    }
  });
});
