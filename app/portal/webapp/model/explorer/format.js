sap.ui.define([], function () {
  "use strict";

  /**
   * Formatters of the explorer pages, bound with `targetType: 'any'` so that they get the values as
   * the services answer them: amounts as decimal strings (exact), heights as numbers, times as ISO text.
   */
  var DASH = "–";

  function empty(value) {
    return value === null || value === undefined || value === "";
  }

  function group(digits) {
    return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  /** A whole number (string or number) with thousands separators. */
  function number(value) {
    if (empty(value)) return DASH;
    var text = String(value);
    var negative = text.charAt(0) === "-";
    var digits = negative ? text.slice(1) : text;
    if (!/^\d+$/.test(digits)) return text;
    return (negative ? "-" : "") + group(digits.replace(/^0+(?=\d)/, ""));
  }

  /** Lovelace (a decimal string) as ADA, exact: 1189560 → "1.18956 ADA". */
  function ada(lovelace) {
    if (empty(lovelace)) return DASH;
    var text = String(lovelace);
    var negative = text.charAt(0) === "-";
    var digits = negative ? text.slice(1) : text;
    if (!/^\d+$/.test(digits)) return text;
    while (digits.length < 7) digits = "0" + digits;
    var whole = digits.slice(0, -6).replace(/^0+(?=\d)/, "");
    var fraction = digits.slice(-6).replace(/0+$/, "");
    return (negative ? "-" : "") + group(whole) + (fraction ? "." + fraction : "") + " ADA";
  }

  /** A long hash or address shortened for a table cell: the start and the end. */
  function short(value) {
    if (empty(value)) return DASH;
    var text = String(value);
    return text.length > 20 ? text.slice(0, 10) + "…" + text.slice(-6) : text;
  }

  /** A timestamp in the browser's locale, with how long ago it was. */
  function time(value) {
    if (empty(value)) return DASH;
    var date = new Date(value);
    if (isNaN(date.getTime())) return String(value);
    return date.toLocaleString() + " (" + age(value) + ")";
  }

  /** How long ago a timestamp was: "12 s ago", "5 min ago", "3 h ago", "2 days ago". */
  function age(value) {
    if (empty(value)) return DASH;
    var seconds = Math.round((Date.now() - new Date(value).getTime()) / 1000);
    if (isNaN(seconds)) return DASH;
    if (seconds < 0) return "just now";
    if (seconds < 90) return seconds + " s ago";
    if (seconds < 90 * 60) return Math.round(seconds / 60) + " min ago";
    if (seconds < 36 * 3600) return Math.round(seconds / 3600) + " h ago";
    return Math.round(seconds / 86400) + " days ago";
  }

  /** A number rounded to two decimals ("98.03"). */
  function round(value) {
    if (empty(value)) return DASH;
    return String(Math.round(Number(value) * 100) / 100);
  }

  function yesNo(value) {
    return empty(value) ? DASH : (value ? "yes" : "no");
  }

  /** A ratio (0.01) as a percentage ("1 %"). */
  function percent(value) {
    if (empty(value)) return DASH;
    return (Math.round(Number(value) * 10000) / 100) + " %";
  }

  /** JSON text pretty-printed (metadata payloads, claims); other text as it is. */
  function json(value) {
    if (empty(value)) return DASH;
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch (e) { return String(value); }
  }

  function text(value) {
    return empty(value) ? DASH : String(value);
  }

  /** "epoch 3 / slot 120". */
  function epochSlot(epoch, slot) {
    if (empty(epoch) && empty(slot)) return DASH;
    return "epoch " + text(epoch) + " / slot " + number(slot);
  }

  /** "<txHash>#<index>" shortened. */
  function outRef(txHash, index) {
    return empty(txHash) ? DASH : short(txHash) + "#" + text(index);
  }

  return {
    number: number, ada: ada, short: short, time: time, age: age, yesNo: yesNo, percent: percent, round: round,
    json: json, text: text, epochSlot: epochSlot, outRef: outRef
  };
});
