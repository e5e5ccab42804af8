sap.ui.define([
  "sap/ui/core/mvc/Controller",
  "sap/ui/core/routing/History",
  "sap/ui/model/json/JSONModel",
  "cag/portal/model/session"
], function (Controller, History, JSONModel, session) {
  "use strict";

  var CHAINS = { "chain-a": "chainA", "chain-b": "chainB" };

  /**
   * What every explorer page shares: the route it shows (`route`, whose arguments go to `show`), a
   * "get a key" strip instead of any read while no key is held (metered reads need one), a message
   * strip for what the services answered instead of data, and navigation to the other pages.
   * Every read goes through the component's OData V4 models, so the Requests dialog lists it.
   */
  return Controller.extend("cag.portal.model.explorer.BaseController", {
    /** The route this page shows; subclasses set it. */
    route: "",

    onInit: function () {
      this.state = new JSONModel(Object.assign({ noKey: !session.key(), blocked: false, message: "", messageType: "Error", chain: "" },
        this.initialState && this.initialState()));
      this.getView().setModel(this.state, "view");
      session.onChange(function (key) {
        this.state.setProperty("/noKey", !key);
        if (key && this.args && this.isShown()) this.load();
      }.bind(this));
      if (this.route) this.router().getRoute(this.route).attachPatternMatched(this.onRouteMatched, this);
    },

    router: function () {
      return this.getOwnerComponent().getRouter();
    },

    model: function (name) {
      return this.getOwnerComponent().getModel(name);
    },

    /** The model name of a route's {chain}: chainA or chainB. */
    modelOf: function (chain) {
      return CHAINS[chain];
    },

    isShown: function () {
      var info = this.router().getRouteInfoByHash(this.router().getHashChanger().getHash() || "");
      return !!info && info.name === this.route;
    },

    onRouteMatched: function (event) {
      this.args = event.getParameter("arguments");
      this.load();
    },

    /** Shows the route's arguments unless no key is held; `show(args)` does the reads. */
    load: function () {
      this.say("");
      this.state.setProperty("/blocked", false);
      this.state.setProperty("/noKey", !session.key());
      if (!session.key()) return;
      this.show(this.args);
    },

    /** Subclasses: bind the page to `args`. */
    show: function () {},

    say: function (text, type) {
      this.state.setProperty("/message", text || "");
      this.state.setProperty("/messageType", type || "Error");
    },

    onMessageClose: function () {
      this.say("");
    },

    /**
     * Shows what went wrong with a read as the service answered it: a key that is missing or no
     * longer valid, units used up, nothing found, or the service's own message and code. The page's
     * content hides when the key was refused or the page's own record (`main`) could not be read.
     */
    failed: function (error, main) {
      var status = error && error.status;
      if (status === 401 || main === true) this.state.setProperty("/blocked", true);
      var body = (error && error.error) || {};
      var code = body.code ? " (" + body.code + ")" : "";
      if (status === 401) {
        this.say("The key this page holds was not accepted" + code + ": get or paste another one on the Keys tab.", "Warning");
      } else if (status === 402 || status === 429) {
        this.say((body.message || "No units left") + code + ": top up on the Keys tab.", "Warning");
      } else if (status === 404) {
        this.say("Not found: " + (body.message || "no such record") + code, "Warning");
      } else {
        this.say((body.message || (error && error.message) || "The read failed") + code, "Error");
      }
    },

    /** Reports a failed read of `binding` on the page (the binding's dataReceived event). */
    watch: function (binding) {
      if (binding && !binding.__cagWatched) {
        binding.__cagWatched = true;
        binding.attachDataReceived(function (event) {
          var error = event.getParameter("error");
          if (error && !error.canceled) this.failed(error);
        }, this);
      }
      return binding;
    },

    /**
     * Binds `control` (a section of the page) to the entity at `path` in `modelName`. Coming back
     * to the entity shown last keeps what was read (each read is metered) unless that read failed
     * or another key is held now.
     */
    bindSection: function (control, modelName, path) {
      var read = path + " " + session.key();
      var current = control.getElementBinding(modelName);
      if (current && current.getPath() === path && control.data("cagRead") === read) return current;
      control.data("cagRead", null);
      control.bindElement({
        path: path,
        model: modelName,
        events: {
          dataReceived: function (event) {
            var error = event.getParameter("error");
            if (!error) control.data("cagRead", read);
            else if (!error.canceled) this.failed(error, true);
          }.bind(this)
        }
      });
      return control.getElementBinding(modelName);
    },

    /** The first entity of a filtered collection (e.g. the block at a height), or undefined. */
    first: function (modelName, path, filters, select) {
      var binding = this.model(modelName).bindList(path, null, null, filters, { $select: select });
      return binding.requestContexts(0, 1).then(function (contexts) {
        var found = contexts[0] && contexts[0].getObject();
        binding.destroy();
        return found;
      });
    },

    // ---- navigation ------------------------------------------------------------------------

    onGoToKeys: function () {
      this.router().navTo("keys");
    },

    onNavBack: function () {
      if (History.getInstance().getPreviousHash() !== undefined) window.history.go(-1);
      else this.router().navTo("explorer");
    },

    /** The custom data `name` of the pressed control (rows and links carry app:chain, app:id). */
    dataOf: function (event, name) {
      return event.getSource().data(name);
    },

    onBlockPress: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.router().navTo("explorer-block", { chain: this.dataOf(event, "chain") || "chain-a", id: String(id) });
    },

    onTransactionPress: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.router().navTo("explorer-transaction", { chain: this.dataOf(event, "chain") || "chain-a", id: String(id) });
    },

    onAddressPress: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.router().navTo("explorer-address", { address: String(id) });
    },

    onPoolPress: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.router().navTo("explorer-pool", { poolId: String(id) });
    },

    onDocumentPress: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.router().navTo("explorer-document", { id: String(id) });
    }
  });
});
