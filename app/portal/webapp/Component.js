sap.ui.define([
  "sap/ui/core/UIComponent",
  "cag/portal/model/session",
  "cag/portal/model/requestLog"
], function (UIComponent, session) {
  "use strict";

  /**
   * The portal: keys (get one by wallet sign-in, voucher or purchase; usage; rotate and revoke),
   * an explorer of both chains and the analytics dashboard, on the OData V4 services themselves.
   * The models send the key the user holds; the gateway closes $batch, so every request is direct.
   */
  return UIComponent.extend("cag.portal.Component", {
    metadata: { manifest: "json", interfaces: ["sap.ui.core.IAsyncContentCreation"] },

    init: function () {
      UIComponent.prototype.init.apply(this, arguments);
      this.setModel(session.model(), "session");
      session.attach(this, ["chainA", "chainB", "analytics"]);
      this.getRouter().initialize();
    }
  });
});
