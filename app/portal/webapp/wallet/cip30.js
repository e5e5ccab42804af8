sap.ui.define([
  "cag/portal/wallet/devWallet",
  "cag/portal/wallet/bytes"
], function (devWallet, bytes) {
  "use strict";

  /**
   * The CIP-30 wallets this browser offers (`window.cardano.<id>`): extension wallets and, in
   * development, the devnet's wallets. `connect(id)` enables one and answers what the key lanes
   * need from it: its address in bech32 and hex, and the wallet API itself.
   */
  var installed;

  function available() {
    installed = installed || devWallet.install();
    return installed.then(function () {
      var cardano = window.cardano || {};
      return Object.keys(cardano).filter(function (id) {
        return cardano[id] && typeof cardano[id].enable === "function" && typeof cardano[id].name === "string";
      }).map(function (id) {
        return { id: id, name: cardano[id].name, icon: cardano[id].icon || "", development: !!cardano[id].isDevelopmentWallet };
      }).sort(function (a, b) { return (a.development - b.development) || a.id.localeCompare(b.id, undefined, { numeric: true }); });
    });
  }

  function connect(id) {
    var wallet = (window.cardano || {})[id];
    if (!wallet) return Promise.reject(new Error("No wallet " + id + " in this browser"));
    return wallet.enable().then(function (api) {
      return Promise.all([api.getUsedAddresses(), api.getChangeAddress()]).then(function (answers) {
        var hex = (answers[0] && answers[0][0]) || answers[1];
        if (!hex) throw new Error("The wallet answered no address");
        return { id: id, name: wallet.name, api: api, addressHex: hex, address: bytes.addressToBech32(hex) };
      });
    });
  }

  /** A CIP-30 error ({ code, info }) or an Error, as one line. */
  function describe(error) {
    if (error && error.info) return "The wallet refused: " + error.info;
    return String((error && error.message) || error);
  }

  return { available: available, connect: connect, describe: describe };
});
