sap.ui.define([
  "cag/portal/model/explorer/BaseController",
  "sap/ui/model/Filter",
  "sap/ui/model/FilterOperator"
], function (BaseController, Filter, FilterOperator) {
  "use strict";

  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  /**
   * One of the caller's chain-B documents: Documents(<id>), the attestations about it
   * (Attestations?$filter=payloadHash eq … or payloadHashB eq …), and their verdicts from the free
   * verify lane: verifyDocument(sha256=…) and verifyAttestation(attestationId=…) of chainb-verify.
   */
  return BaseController.extend("cag.portal.controller.ExplorerDocument", {
    route: "explorer-document",

    onInit: function () {
      BaseController.prototype.onInit.apply(this, arguments);
      this.attestationTemplate = this.byId("documentAttestations").getBindingInfo("items").template;
    },

    show: function (args) {
      var id = String(args.id || "").toLowerCase();
      var valid = UUID.test(id);
      this.state.setProperty("/valid", valid);
      this.state.setProperty("/verdict", null);
      if (!valid) {
        this.say("“" + args.id + "” is no document id (a UUID, as anchorDocument answers it).", "Warning");
        return;
      }
      var binding = this.bindSection(this.byId("documentSection"), "chainB", "/Documents(" + id + ")");
      binding.getBoundContext().requestProperty("payloadHash").then(this.showAttestations.bind(this), function () { /* reported by the section */ });
    },

    /** The attestations whose first or second document is this one. */
    showAttestations: function (payloadHash) {
      var table = this.byId("documentAttestations");
      if (!payloadHash) {
        table.unbindItems();
        return;
      }
      table.bindItems({
        path: "/Attestations",
        model: "chainB",
        template: this.attestationTemplate,
        templateShareable: true,
        parameters: { $orderby: "createdAt desc" },
        filters: [new Filter({
          filters: [new Filter("payloadHash", FilterOperator.EQ, payloadHash), new Filter("payloadHashB", FilterOperator.EQ, payloadHash)],
          and: false
        })]
      });
      this.watch(table.getBinding("items"));
    },

    onVerifyDocument: function () {
      var context = this.byId("documentSection").getBindingContext("chainB");
      var sha256 = context && context.getProperty("payloadHash");
      if (!sha256) {
        this.say("This record has no payload hash yet (a commitment not revealed): nothing to verify.", "Warning");
        return;
      }
      this.verify("verifyDocument", "sha256", sha256, "Verify document " + sha256.slice(0, 12) + "…");
    },

    onVerifyAttestation: function (event) {
      var id = this.dataOf(event, "id");
      if (id) this.verify("verifyAttestation", "attestationId", id, "Verify attestation " + id);
    },

    /** Calls a function of the verify lane (free, no key needed) and shows its verdict. */
    verify: function (name, parameter, value, title) {
      var page = this.byId("documentPage");
      var binding = this.model("chainBVerify").bindContext("/" + name + "(...)");
      binding.setParameter(parameter, value);
      page.setBusy(true);
      binding.invoke().then(function () {
        return binding.getBoundContext().requestObject();
      }).then(function (verdict) {
        this.state.setProperty("/verdict", Object.assign({ title: title }, verdict));
      }.bind(this), this.failed.bind(this)).finally(function () {
        page.setBusy(false);
        binding.destroy();
      });
    }
  });
});
