sap.ui.define([
  "cag/portal/model/explorer/BaseController"
], function (BaseController) {
  "use strict";

  var SECTIONS = {
    address: ["addressSection", "/Addresses", "addressUtxos", "addressAssets", "addressTransactions"],
    stake: ["accountSection", "/Accounts", "accountAddresses"]
  };

  /**
   * A chain-A address: Addresses('<addr…>') with its balance, UTxOs, native assets and
   * transactions; or a stake address: Accounts('<stake…>') with its delegation and addresses.
   */
  return BaseController.extend("cag.portal.controller.ExplorerAddress", {
    route: "explorer-address",

    show: function (args) {
      var address = String(args.address || "");
      var kind = /^stake(_test)?1[0-9a-z]+$/.test(address) ? "stake" : /^addr(_test)?1[0-9a-z]+$/.test(address) ? "address" : "";
      this.state.setProperty("/kind", kind);
      this.state.setProperty("/title", kind === "stake" ? "Chain A stake account" : "Chain A address");
      if (!kind) {
        this.say("“" + address + "” is no chain-A address: an address starts with addr1, addr_test1, stake1 or stake_test1.", "Warning");
        return;
      }
      Object.keys(SECTIONS).forEach(function (other) {
        if (other !== kind) this.byId(SECTIONS[other][0]).unbindElement("chainA");
      }, this);
      var section = SECTIONS[kind];
      this.bindSection(this.byId(section[0]), "chainA", section[1] + "('" + address + "')");
      section.slice(2).forEach(function (id) { this.watch(this.byId(id).getBinding("items")); }, this);
    }
  });
});
