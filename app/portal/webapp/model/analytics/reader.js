sap.ui.define([], function () {
  "use strict";

  /**
   * Calls the analytics service's functions through the portal's `analytics` OData V4 model, so
   * every call is a plain GET such as `/odata/v4/analytics/compare(metric='tx.count',window='24h')`
   * (and shows in the Requests dialog). Parameters become OData literals: strings in single quotes
   * with a quote doubled and the rest URI-encoded, whole numbers as they are.
   */
  function literal(value) {
    if (typeof value === "number") {
      if (!isFinite(value)) throw new Error("not a number: " + value);
      return String(Math.round(value));
    }
    return "'" + encodeURIComponent(String(value).replace(/'/g, "''")) + "'";
  }

  /** The function's path with its parameters, in the order given. */
  function path(name, parameters) {
    var list = Object.keys(parameters || {}).map(function (key) { return key + "=" + literal(parameters[key]); });
    return "/" + name + "(" + list.join(",") + ")";
  }

  /** What a person is told about a failed read: the API's message and code, and its HTTP status on `status`. */
  function problem(error) {
    var body = (error && error.error) || {};
    var described = new Error(body.message || (error && error.message) || String(error));
    described.code = body.code || (error && error.status ? "HTTP_" + error.status : undefined);
    described.status = error && error.status;
    return described;
  }

  /** Calls function `name` with `parameters`; answers its result (a copy), or rejects with `problem(error)`. */
  function read(model, name, parameters) {
    var binding = model.bindContext(path(name, parameters));
    return binding.requestObject().then(function (result) {
      binding.destroy();
      return result;
    }, function (error) {
      binding.destroy();
      throw problem(error);
    });
  }

  return { literal: literal, path: path, read: read, problem: problem };
});
