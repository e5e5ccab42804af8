sap.ui.define([
  "cag/portal/model/explorer/BaseController"
], function (BaseController) {
  "use strict";

  /** A chain-A stake pool: Pools('<pool1…>') with its stake, pledge, blocks and delegators. */
  return BaseController.extend("cag.portal.controller.ExplorerPool", {
    route: "explorer-pool",

    show: function (args) {
      var poolId = String(args.poolId || "");
      var valid = /^pool1[0-9a-z]+$/.test(poolId);
      this.state.setProperty("/valid", valid);
      if (!valid) {
        this.say("“" + poolId + "” is no pool id: a pool id starts with pool1.", "Warning");
        return;
      }
      this.bindSection(this.byId("poolSection"), "chainA", "/Pools('" + poolId + "')");
      this.watch(this.byId("poolDelegators").getBinding("items"));
    }
  });
});
