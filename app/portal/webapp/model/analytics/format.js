sap.ui.define([], function () {
  "use strict";

  /**
   * How the analytics page writes figures: compact numbers (1.2k, 13.3T) with the exact value on
   * hover, ratios in percent, the change against the previous window, and bucket labels at the
   * series' resolution (minutes and hours in local time, days as UTC dates, as the service counts them).
   */
  var NONE = "–";
  var compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });
  var plain = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });
  var small = new Intl.NumberFormat("en", { maximumSignificantDigits: 3 });
  var exact = new Intl.NumberFormat("en", { maximumFractionDigits: 6 });
  var RATIOS = { ratio: true };

  function known(value) { return value !== null && value !== undefined && !isNaN(Number(value)); }

  /** A figure as a short number; ratios (0..1) as percent. */
  function figure(value, unit) {
    if (!known(value)) return NONE;
    var number = Number(value);
    if (RATIOS[unit]) return plain.format(number * 100) + " %";
    var size = Math.abs(number);
    if (size >= 10000) return compact.format(number);
    if (size > 0 && size < 1) return small.format(number);
    return plain.format(number);
  }

  /** The exact value, for tooltips and tables that need it. */
  function full(value) { return known(value) ? exact.format(Number(value)) : NONE; }

  /** "+12.5 % against the previous window", or why there is nothing to compare with. */
  function change(changePercent, previous) {
    if (!known(changePercent)) return known(previous) && Number(previous) === 0 ? "previous window: 0" : "no previous figure";
    var number = Number(changePercent);
    return (number > 0 ? "▲ +" : number < 0 ? "▼ " : "") + plain.format(number) + " % vs previous";
  }

  /** The unit a chain reports a figure in ("fee unit" is the chain's own). */
  function unit(metricUnit, feeUnit) {
    if (metricUnit === "fee unit") return feeUnit || "fee unit";
    if (metricUnit === "ratio") return "";
    return metricUnit || "";
  }

  function pad(number) { return number < 10 ? "0" + number : String(number); }

  /** A bucket's label at the resolution of its series. */
  function bucket(isoTime, resolution) {
    if (!isoTime) return "";
    if (resolution === "day") return String(isoTime).slice(5, 10);
    var at = new Date(isoTime);
    var time = pad(at.getHours()) + ":" + pad(at.getMinutes());
    return resolution === "hour" && at.getHours() === 0 ? (pad(at.getMonth() + 1) + "-" + pad(at.getDate()) + " " + time) : time;
  }

  /** A moment as the person reading it counts time. */
  function moment(isoTime) {
    if (!isoTime) return NONE;
    var at = new Date(isoTime);
    return at.getFullYear() + "-" + pad(at.getMonth() + 1) + "-" + pad(at.getDate()) + " " + pad(at.getHours()) + ":" + pad(at.getMinutes());
  }

  /** A share (0..1) in percent. */
  function share(value) { return known(value) ? plain.format(Number(value) * 100) + " %" : NONE; }

  return { NONE: NONE, known: known, figure: figure, full: full, change: change, unit: unit, bucket: bucket, moment: moment, share: share };
});
