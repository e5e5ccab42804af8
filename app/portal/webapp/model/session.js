sap.ui.define([
  "sap/ui/model/json/JSONModel"
], function (JSONModel) {
  "use strict";

  /**
   * The key the user holds, kept in this browser tab only (sessionStorage: gone when the tab
   * closes), and sent by every OData model of the portal and by every gateway call it makes.
   */
  var STORAGE = "cag.portal.key";
  var state = new JSONModel({ key: "", masked: "" });
  var odataModels = [];
  var listeners = [];

  function masked(key) {
    return key ? key.slice(0, 8) + "…" + key.slice(-4) : "";
  }

  function readStored() {
    try { return window.sessionStorage.getItem(STORAGE) || ""; } catch (e) { return ""; }
  }

  function applyToModels(key) {
    odataModels.forEach(function (model) {
      model.changeHttpHeaders({ Authorization: key ? "Bearer " + key : undefined });
    });
  }

  function setKey(key) {
    key = (key || "").trim();
    try {
      if (key) window.sessionStorage.setItem(STORAGE, key); else window.sessionStorage.removeItem(STORAGE);
    } catch (e) { /* storage off: the key lives as long as the page */ }
    state.setProperty("/key", key);
    state.setProperty("/masked", masked(key));
    applyToModels(key);
    listeners.forEach(function (listener) { listener(key); });
  }

  setKey(readStored());

  return {
    model: function () { return state; },
    key: function () { return state.getProperty("/key"); },
    setKey: setKey,
    /** Calls `listener(key)` whenever the key held changes. */
    onChange: function (listener) { listeners.push(listener); },
    /** Lets the component's OData models send the key, now and whenever it changes. */
    attach: function (component, modelNames) {
      odataModels = modelNames.map(function (name) { return component.getModel(name); }).filter(Boolean);
      applyToModels(state.getProperty("/key"));
    },
    authorization: function () {
      var key = state.getProperty("/key");
      return key ? { Authorization: "Bearer " + key } : {};
    }
  };
});
