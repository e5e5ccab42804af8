sap.ui.define([
  "sap/ui/core/mvc/Controller",
  "cag/portal/model/requestLog"
], function (Controller, requestLog) {
  "use strict";

  return Controller.extend("cag.portal.controller.App", {
    onInit: function () {
      var router = this.getOwnerComponent().getRouter();
      router.attachRouteMatched(function (event) {
        var name = event.getParameter("name");
        this.byId("sections").setSelectedKey(name.split("-")[0]);
      }, this);
    },

    onSectionSelect: function (event) {
      this.getOwnerComponent().getRouter().navTo(event.getParameter("key"));
    },

    onShowRequests: function () {
      requestLog.open(this.getView());
    }
  });
});
