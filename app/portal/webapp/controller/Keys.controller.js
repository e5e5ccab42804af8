sap.ui.define([
  "sap/ui/core/mvc/Controller",
  "sap/ui/model/json/JSONModel",
  "sap/ui/core/Fragment",
  "sap/m/MessageToast",
  "sap/m/MessageBox",
  "cag/portal/model/api",
  "cag/portal/model/session",
  "cag/portal/model/keyLanes",
  "cag/portal/wallet/cip30"
], function (Controller, JSONModel, Fragment, MessageToast, MessageBox, api, session, keyLanes, cip30) {
  "use strict";

  var USAGE_DAYS = 14;
  var TIP_CALL = "/odata/v4/chaina-odata/Blocks?$top=1&$orderby=height%20desc&$select=height,hash";

  /**
   * Keys: get one (wallet sign-in, voucher, purchase, or paste one), see it once with its client
   * configuration, then its units, validity, usage per day and last calls; rotate and revoke.
   */
  return Controller.extend("cag.portal.controller.Keys", {
    onInit: function () {
      this.view = new JSONModel({ message: {}, wallets: [], walletId: "", packs: [], pack: "", account: null, usageChart: null,
        voucherCode: "", pastedKey: "", progress: "", busy: false, walletSession: null, walletKeys: [] });
      this.getView().setModel(this.view, "view");
      this.once = new JSONModel({});
      cip30.available().then(this.showWallets.bind(this));
      api.get("/prices", { withKey: false }).then(function (answer) {
        var packs = answer.body.packs || [];
        this.view.setProperty("/packs", packs);
        this.view.setProperty("/pack", (packs[0] || {}).name || "");
      }.bind(this)).catch(this.showError.bind(this));
      session.onChange(this.loadAccount.bind(this));
      this.loadAccount();
    },

    showWallets: function (wallets) {
      this.view.setProperty("/wallets", wallets);
      if (wallets.length && !this.view.getProperty("/walletId")) this.view.setProperty("/walletId", wallets[0].id);
    },

    // ---- the key held ----------------------------------------------------------------------

    loadAccount: function () {
      if (!session.key()) {
        this.view.setProperty("/account", null);
        return Promise.resolve();
      }
      return Promise.all([api.get("/me"), api.get("/me/usage?days=" + USAGE_DAYS)]).then(function (answers) {
        this.view.setProperty("/account", answers[0].body);
        this.view.setProperty("/usageChart", this.usageChart(answers[1].body.days));
      }.bind(this)).catch(function (error) {
        if (error.status === 401) {
          this.say("Error", "This key is not valid (any more): " + api.describe(error) + ". Get or paste another one below.");
          session.setKey("");
          return;
        }
        this.showError(error);
      }.bind(this));
    },

    usageChart: function (days) {
      return {
        type: "bar",
        data: {
          labels: days.map(function (day) { return day.day.slice(5); }),
          datasets: [{ label: "Units used", data: days.map(function (day) { return day.used; }), backgroundColor: "#0070f2" }]
        },
        options: { plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }
      };
    },

    onRefresh: function () { this.loadAccount(); },

    onTryCall: function () {
      api.get(TIP_CALL).then(function (answer) {
        var tip = (answer.body.value || [])[0] || {};
        MessageToast.show("Tip block " + tip.height + ": charged " + answer.headers.get("x-access-units-charged") + " unit(s), " + answer.headers.get("x-access-units-left") + " left");
        return this.loadAccount();
      }.bind(this)).catch(this.showError.bind(this));
    },

    onRotate: function () {
      this.confirm("Rotate this key? The current secret stops working at once; units and ledger stay.", "Rotate", function () {
        return api.post("/me/rotate").then(function (answer) { this.showKeyOnce(answer.body); }.bind(this));
      });
    },

    onRevoke: function () {
      this.confirm("Revoke this key? It stops working for good, with its units.", "Revoke", function () {
        return api.post("/me/revoke").then(function () {
          session.setKey("");
          this.say("Information", "The key is revoked.");
        }.bind(this));
      });
    },

    onForget: function () {
      session.setKey("");
      this.say("Information", "This tab no longer holds the key. It is still valid: paste it again to use it.");
    },

    onUseKey: function () {
      session.setKey(this.view.getProperty("/pastedKey"));
      this.view.setProperty("/pastedKey", "");
    },

    // ---- the lanes -------------------------------------------------------------------------

    onSignIn: function () {
      this.withWallet(function (wallet) {
        return keyLanes.signIn(wallet).then(function (answer) {
          this.view.setProperty("/walletSession", { token: answer.session.token, address: answer.address });
          this.loadWalletKeys();
          if (answer.key) return this.showKeyOnce(answer);
          this.say("Information", "Signed in as " + answer.address + ". This wallet's first key was issued before: its keys are listed below; rotate one from the key itself, or buy a pack.");
        }.bind(this));
      });
    },

    loadWalletKeys: function () {
      var walletSession = this.view.getProperty("/walletSession");
      if (!walletSession) return;
      api.get("/auth/keys", { withKey: false, headers: { Authorization: "Bearer " + walletSession.token } })
        .then(function (answer) { this.view.setProperty("/walletKeys", answer.body.keys); }.bind(this))
        .catch(this.showError.bind(this));
    },

    onSignOut: function () {
      var walletSession = this.view.getProperty("/walletSession");
      api.post("/auth/sign-out", {}, { withKey: false, headers: { Authorization: "Bearer " + walletSession.token } })
        .catch(function () { /* the session ends here either way */ })
        .then(function () { this.view.setProperty("/walletSession", null); this.view.setProperty("/walletKeys", []); }.bind(this));
    },

    onRedeem: function () {
      var code = this.view.getProperty("/voucherCode");
      if (!code) return;
      this.busy(keyLanes.redeem(code, !!session.key()).then(function (answer) {
        this.view.setProperty("/voucherCode", "");
        if (answer.key) return this.showKeyOnce(answer);
        this.say("Success", answer.credited + " units added: " + answer.unitsLeft + " units left.");
        return this.loadAccount();
      }.bind(this)));
    },

    onBuy: function () { this.purchase(false); },
    onTopUp: function () { this.purchase(true); },

    purchase: function (topUp) {
      var pack = this.view.getProperty("/pack");
      this.withWallet(function (wallet) {
        return keyLanes.buy(pack, wallet, topUp, this.view.setProperty.bind(this.view, "/progress")).then(function (answer) {
          this.view.setProperty("/progress", "");
          if (answer.key) return this.showKeyOnce(answer);
          this.say("Success", "Paid: " + answer.credited + " units added, " + answer.unitsLeft + " units left.");
          return this.loadAccount();
        }.bind(this), function (error) {
          this.view.setProperty("/progress", "");
          throw error;
        }.bind(this));
      });
    },

    withWallet: function (work) {
      var id = this.view.getProperty("/walletId");
      this.busy(cip30.connect(id).then(work.bind(this)));
    },

    // ---- the key, shown once ---------------------------------------------------------------

    showKeyOnce: function (delivered) {
      this.once.setData(Object.assign({}, delivered, { configurationText: JSON.stringify(delivered.configuration, null, 2) }));
      if (!this.keyOnceDialog) {
        this.keyOnceDialog = Fragment.load({ id: this.getView().getId(), name: "cag.portal.view.KeyOnce", controller: this }).then(function (dialog) {
          dialog.setModel(this.once, "once");
          this.getView().addDependent(dialog);
          return dialog;
        }.bind(this));
      }
      return this.keyOnceDialog.then(function (dialog) { dialog.open(); });
    },

    onCopy: function (event) {
      var field = event.getSource().data("copy");
      navigator.clipboard.writeText(this.once.getProperty("/" + field)).then(
        function () { MessageToast.show("Copied"); },
        function () { MessageToast.show("Copying is not allowed here: select the text and copy it"); });
    },

    onKeySaved: function () {
      session.setKey(this.once.getProperty("/key"));
      this.keyOnceDialog.then(function (dialog) { dialog.close(); });
      this.once.setData({});
      this.loadWalletKeys();
    },

    onKeyOnceEscape: function (handler) {
      // Closing without saving would lose the key for good: only "I have saved it" closes.
      handler.reject();
    },

    // ---- feedback --------------------------------------------------------------------------

    busy: function (work) {
      this.view.setProperty("/busy", true);
      return Promise.resolve(work).catch(this.showError.bind(this)).then(function () { this.view.setProperty("/busy", false); }.bind(this));
    },

    confirm: function (question, action, work) {
      MessageBox.confirm(question, {
        actions: [action, MessageBox.Action.CANCEL],
        emphasizedAction: action,
        onClose: function (choice) { if (choice === action) this.busy(work.call(this)); }.bind(this)
      });
    },

    say: function (type, text) { this.view.setProperty("/message", { type: type, text: text }); },

    showError: function (error) { this.say("Error", error && error.info ? cip30.describe(error) : api.describe(error)); },

    onMessageClose: function () { this.view.setProperty("/message", {}); },

    formatTime: function (value) { return value ? new Date(value).toLocaleString() : ""; },

    formatAda: function (lovelace) { return lovelace ? (Number(lovelace) / 1e6).toLocaleString() + " ADA" : ""; }
  });
});
