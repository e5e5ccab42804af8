sap.ui.define([
  "cag/portal/model/explorer/BaseController",
  "cag/portal/model/explorer/search",
  "cag/portal/model/session"
], function (BaseController, search, session) {
  "use strict";

  var TABLES = ["chainABlocks", "chainATransactions", "chainBBlocks", "chainBTransactions", "chainBDocuments"];
  /** Coming back to the landing reads the tables again once they are this old (each read is metered); Refresh always does. */
  var FRESH_MS = 30000;

  /**
   * The explorer's landing: the tip of both chains, their recent blocks and transactions, the
   * caller's chain-B documents, and a search that opens the right page. The tables' bindings wait
   * (suspended) until a key is held, then read; Refresh reads them again, and so does a visit once
   * they are older than FRESH_MS.
   */
  return BaseController.extend("cag.portal.controller.Explorer", {
    route: "explorer",

    onInit: function () {
      // Another key may see other documents: the next visit reads again (before the base class's listener shows it).
      session.onChange(function () { this.readAt = 0; }.bind(this));
      BaseController.prototype.onInit.apply(this, arguments);
    },

    initialState: function () {
      return { tipA: {}, tipB: {} };
    },

    bindings: function () {
      return TABLES.map(function (id) { return this.watch(this.byId(id).getBinding("items")); }, this);
    },

    show: function (args, always) {
      if (!always && this.readAt && Date.now() - this.readAt < FRESH_MS) return;
      this.readAt = Date.now();
      this.bindings().forEach(function (binding) {
        if (binding.isSuspended()) binding.resume();
        else binding.refresh();
      });
    },

    onRefresh: function () {
      this.say("");
      this.show(this.args, true);
    },

    /** The newest block of a recent-blocks table is its chain's tip. */
    onTipUpdated: function (event) {
      var table = event.getSource();
      var first = table.getItems()[0];
      var context = first && first.getBindingContext(table.data("chain") === "chain-a" ? "chainA" : "chainB");
      var tip = context ? Object.assign({}, context.getObject()) : {};
      this.state.setProperty(table.data("chain") === "chain-a" ? "/tipA" : "/tipB", tip);
    },

    onSearch: function (event) {
      var query = (event.getParameter("query") || "").trim();
      if (!query || event.getParameter("clearButtonPressed")) return;
      var field = event.getSource();
      var models = { chainA: this.model("chainA"), chainB: this.model("chainB") };
      this.say("");
      if (search.shape(query).kind === "unknown") {
        this.say("“" + query + "” is neither a height, a 64-hex hash, an address (addr… or stake…), a pool id (pool1…) nor a document id.", "Warning");
        return;
      }
      field.setBusy(true);
      search.resolve(models, query).then(function (target) {
        field.setBusy(false);
        if (target) this.router().navTo(target.route, target.args);
        else this.say("Nothing found for “" + query + "” on either chain.", "Warning");
      }.bind(this), function (error) {
        field.setBusy(false);
        this.failed(error);
      }.bind(this));
    }
  });
});
