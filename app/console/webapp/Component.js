sap.ui.define([
  "sap/ui/core/UIComponent",
  "cag/console/model/annotations"
], function (UIComponent, Annotations) {
  "use strict";

  /**
   * The operator console: a list report per entity set of the operator service and an object page
   * per row, both built from the service's own annotations (app/console/annotations.cds) through
   * the OData V4 meta model. Every data call goes to /odata/v4/operator with the browser's
   * operator login; the gateway closes $batch, so every request is direct.
   */
  return UIComponent.extend("cag.console.Component", {
    metadata: { manifest: "json", interfaces: ["sap.ui.core.IAsyncContentCreation"] },

    init: function () {
      UIComponent.prototype.init.apply(this, arguments);
      this.getRouter().initialize();
    },

    /** The service's annotations, read through the model's meta model (one reader for every page). */
    annotations: function () {
      this.annotationReader = this.annotationReader || new Annotations(this.getModel().getMetaModel());
      return this.annotationReader;
    }
  });
});
