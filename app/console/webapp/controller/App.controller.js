sap.ui.define([
  "sap/m/IconTabFilter",
  "sap/ui/core/mvc/Controller"
], function (IconTabFilter, Controller) {
  "use strict";

  /**
   * The console's frame: a tab per entity set the service lists (those its annotations give fields
   * to filter by, titled by their plural names), and a note when the operator login is missing.
   */
  return Controller.extend("cag.console.controller.App", {
    onInit: function () {
      var component = this.getOwnerComponent();
      var tabs = this.byId("sections");
      component.annotations().listedSets().then(function (sets) {
        sets.forEach(function (set) {
          tabs.addItem(new IconTabFilter({ id: this.createId("tab-" + set.name), key: set.name, text: set.title }));
        }, this);
        tabs.setSelectedKey(this.currentSet || (sets[0] && sets[0].name));
      }.bind(this)).catch(function (error) {
        var problem = this.byId("signInProblem");
        problem.setText("The operator service did not answer (" + error.message + "): sign in as an operator (role admin) and reload.");
        problem.setVisible(true);
      }.bind(this));
      component.getRouter().attachRouteMatched(function (event) {
        this.currentSet = event.getParameter("arguments").set;
        if (this.currentSet) tabs.setSelectedKey(this.currentSet);
      }, this);
    },

    onSectionSelect: function (event) {
      this.getOwnerComponent().getRouter().navTo("list", { set: event.getParameter("key") });
    }
  });
});
