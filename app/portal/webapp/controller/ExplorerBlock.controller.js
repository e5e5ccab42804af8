sap.ui.define([
  "cag/portal/model/explorer/BaseController",
  "sap/ui/model/Filter",
  "sap/ui/model/FilterOperator"
], function (BaseController, Filter, FilterOperator) {
  "use strict";

  var SECTIONS = { "chain-a": ["chainABlock", "blockTransactions"], "chain-b": ["chainBBlock", "chainBBlockTransactions"] };

  /**
   * A block of either chain, by hash or by height (the block at that height is looked up first),
   * with its transactions: Blocks('<hash>') and Blocks('<hash>')/transactions.
   */
  return BaseController.extend("cag.portal.controller.ExplorerBlock", {
    route: "explorer-block",

    show: function (args) {
      var chain = args.chain;
      var modelName = this.modelOf(chain);
      var id = String(args.id || "").toLowerCase();
      this.state.setProperty("/chain", chain);
      this.state.setProperty("/title", (chain === "chain-b" ? "Chain B" : "Chain A") + " block" + (/^\d+$/.test(id) ? " at height " + id : ""));
      if (!modelName || !(/^\d{1,10}$/.test(id) || /^[0-9a-f]{64}$/.test(id))) {
        this.state.setProperty("/chain", "");
        this.say("“" + args.id + "” is no block of chain A or chain B: a block is a height or a 64-hex hash.", "Warning");
        return;
      }
      Object.keys(SECTIONS).forEach(function (other) {
        if (other !== chain) this.byId(SECTIONS[other][0]).unbindElement(this.modelOf(other));
      }, this);
      var heights = this.heights = this.heights || {};
      var hash = /^\d+$/.test(id) && !heights[chain + id]
        ? this.first(modelName, "/Blocks", [new Filter("height", FilterOperator.EQ, Number(id))], "hash,height").then(function (block) { return block && block.hash; })
        : Promise.resolve(heights[chain + id] || id);
      hash.then(function (found) {
        if (found && /^\d+$/.test(id)) heights[chain + id] = found;
        if (!found) {
          this.state.setProperty("/blocked", true);
          this.say("No block at height " + id + " on " + (chain === "chain-b" ? "chain B" : "chain A") + " (yet).", "Warning");
          return;
        }
        this.bindSection(this.byId(SECTIONS[chain][0]), modelName, "/Blocks('" + found + "')");
        this.watch(this.byId(SECTIONS[chain][1]).getBinding("items"));
      }.bind(this), function (error) { this.failed(error, true); }.bind(this));
    }
  });
});
