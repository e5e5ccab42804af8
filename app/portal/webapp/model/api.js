sap.ui.define([
  "cag/portal/model/session"
], function (session) {
  "use strict";

  /**
   * Calls to the gateway's own JSON routes (/me, /prices, /auth/..., /vouchers/redeem, /keys):
   * answers { status, body, headers }; an error answer rejects with an Error carrying the API's
   * stable code (error.code) and message, as every route answers them.
   */
  function call(method, path, options) {
    options = options || {};
    var headers = Object.assign({ Accept: "application/json" }, options.withKey === false ? {} : session.authorization(), options.headers || {});
    var init = { method: method, headers: headers, credentials: "same-origin" };
    if (options.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    return fetch(path, init).then(function (response) {
      return response.text().then(function (text) {
        var body;
        try { body = text ? JSON.parse(text) : undefined; } catch (e) { body = { text: text }; }
        var answer = { status: response.status, body: body, headers: response.headers };
        if (response.ok || (options.accept || []).indexOf(response.status) >= 0) return answer;
        var error = new Error((body && body.error && body.error.message) || ("HTTP " + response.status));
        error.code = (body && body.error && body.error.code) || "HTTP_" + response.status;
        error.status = response.status;
        error.answer = answer;
        throw error;
      });
    });
  }

  return {
    get: function (path, options) { return call("GET", path, options); },
    post: function (path, body, options) { return call("POST", path, Object.assign({}, options, { body: body === undefined ? {} : body })); },
    /** The message an error shows a person: the API's message and its code. */
    describe: function (error) {
      return error && error.code ? error.message + " (" + error.code + ")" : String((error && error.message) || error);
    }
  };
});
