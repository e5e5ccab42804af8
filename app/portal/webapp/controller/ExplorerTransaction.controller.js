sap.ui.define([
  "cag/portal/model/explorer/BaseController"
], function (BaseController) {
  "use strict";

  var SECTIONS = {
    "chain-a": ["chainATransaction", "txInputs", "txOutputs", "txMetadata"],
    "chain-b": ["chainBTransaction", "chainBTxActions", "chainBTxSegments"]
  };

  /**
   * A transaction of either chain: Transactions('<hash>'), with its inputs, outputs and metadata
   * (chain A) or its contract actions and segments (chain B), each its own request.
   */
  return BaseController.extend("cag.portal.controller.ExplorerTransaction", {
    route: "explorer-transaction",

    show: function (args) {
      var chain = args.chain;
      var modelName = this.modelOf(chain);
      var hash = String(args.id || "").toLowerCase();
      this.state.setProperty("/chain", chain);
      this.state.setProperty("/title", (chain === "chain-b" ? "Chain B" : "Chain A") + " transaction");
      if (!modelName || !/^[0-9a-f]{64}$/.test(hash)) {
        this.state.setProperty("/chain", "");
        this.say("“" + args.id + "” is no transaction of chain A or chain B: a transaction is a 64-hex hash.", "Warning");
        return;
      }
      Object.keys(SECTIONS).forEach(function (other) {
        if (other !== chain) this.byId(SECTIONS[other][0]).unbindElement(this.modelOf(other));
      }, this);
      this.bindSection(this.byId(SECTIONS[chain][0]), modelName, "/Transactions('" + hash + "')");
      SECTIONS[chain].slice(1).forEach(function (id) { this.watch(this.byId(id).getBinding("items")); }, this);
    }
  });
});
