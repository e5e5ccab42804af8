sap.ui.define([
  "sap/ui/model/json/JSONModel",
  "sap/ui/core/Fragment"
], function (JSONModel, Fragment) {
  "use strict";

  /**
   * Every request the portal sends to the API (OData reads, gateway routes), newest first, with
   * its status and a curl command that repeats it, so a developer learns the API from the page.
   * OData V4 models use XMLHttpRequest, the portal's own calls fetch: both are observed here.
   */
  var MAX = 100;
  var log = new JSONModel({ requests: [] });
  var API = /^\/(odata|me|prices|keys|topup|vouchers|auth|health|zk-config)(\/|$|\?)/;

  function record(method, url, status) {
    var parsed = new URL(url, window.location.href);
    if (parsed.origin !== window.location.origin || !API.test(parsed.pathname)) return;
    var path = decodeURIComponent(parsed.pathname + parsed.search);
    var requests = log.getProperty("/requests").slice(0, MAX - 1);
    requests.unshift({
      method: method,
      path: path,
      status: status,
      time: new Date().toLocaleTimeString(),
      curl: "curl -sS" + (method === "GET" ? "" : " -X " + method) + " -H \"Authorization: Bearer $KEY\" '" + parsed.origin + parsed.pathname + parsed.search + "'"
    });
    log.setProperty("/requests", requests);
  }

  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this._cagRequest = { method: String(method).toUpperCase(), url: String(url) };
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    var request = this._cagRequest;
    if (request) this.addEventListener("loadend", function () { record(request.method, request.url, this.status); });
    return send.apply(this, arguments);
  };
  var originalFetch = window.fetch.bind(window);
  window.fetch = function (input, init) {
    var url = typeof input === "string" ? input : input.url;
    var method = ((init && init.method) || (input && input.method) || "GET").toUpperCase();
    return originalFetch(input, init).then(function (response) {
      record(method, url, response.status);
      return response;
    });
  };

  var dialog;
  return {
    model: function () { return log; },
    open: function (view) {
      if (!dialog) {
        dialog = Fragment.load({ id: view.getId(), name: "cag.portal.view.RequestLog", controller: { onClose: function () { dialog.then(function (d) { d.close(); }); } } })
          .then(function (loaded) { loaded.setModel(log, "log"); view.addDependent(loaded); return loaded; });
      }
      dialog.then(function (loaded) { loaded.open(); });
    }
  };
});
