sap.ui.define([
  "sap/m/Button",
  "sap/m/Column",
  "sap/m/ColumnListItem",
  "sap/m/Label",
  "sap/m/MessageBox",
  "sap/m/VBox",
  "sap/ui/core/mvc/Controller",
  "sap/ui/model/Filter",
  "sap/ui/model/Sorter",
  "sap/ui/model/odata/v4/ODataUtils",
  "cag/console/model/fields",
  "cag/console/model/operations"
], function (Button, Column, ColumnListItem, Label, MessageBox, VBox, Controller, Filter, Sorter, ODataUtils, fields, operations) {
  "use strict";

  /** The key predicate of a row's path, `/Prices(routeClass='reads',IsActiveEntity=true)` → `routeClass='reads',IsActiveEntity=true`. */
  function predicateOf(path) {
    return path.slice(path.indexOf("(") + 1, -1);
  }

  /**
   * A list report of one entity set, built from its annotations: filter fields from
   * UI.SelectionFields, columns from UI.LineItem (and its order from UI.PresentationVariant), the
   * actions that need no row (UI.LineItem's DataFieldForAction on the service) in its toolbar. A row
   * opens its object page.
   */
  return Controller.extend("cag.console.controller.ListReport", {
    onInit: function () {
      var router = this.getOwnerComponent().getRouter();
      router.getRoute("home").attachPatternMatched(function () {
        this.getOwnerComponent().annotations().listedSets().then(function (sets) {
          if (sets.length) router.navTo("list", { set: sets[0].name }, true);
        });
      }, this);
      router.getRoute("list").attachPatternMatched(function (event) { this.show(event.getParameter("arguments").set); }, this);
    },

    /** Shows the list of `set`: built the first time (or when another set was shown), read again otherwise. */
    show: function (set) {
      if (this.list && this.list.set === set) {
        var binding = this.byId("table").getBinding("items");
        if (binding) binding.refresh();
        return;
      }
      this.getOwnerComponent().annotations().listOf(set).then(this.build.bind(this)).catch(function (error) {
        this.byId("listTitle").setText("The list of " + set + " could not be read: " + error.message);
      }.bind(this));
    },

    build: function (list) {
      var view = this.getView();
      var table = this.byId("table");
      this.list = list;
      this.byId("listTitle").setText(list.header.TypeNamePlural || list.set);
      this.byId("search").setValue("");

      var filterFields = this.byId("filterFields");
      filterFields.destroyItems();
      this.filters = list.filters.map(function (property) {
        var filter = fields.filter(property, view.createId(fields.idOf("filter", property)));
        filterFields.addItem(new VBox({ items: [new Label({ text: property.label, labelFor: filter.control }), filter.control] }).addStyleClass("sapUiSmallMarginEnd"));
        return filter;
      });

      var toolbar = this.byId("tableToolbar");
      (this.actionButtons || []).forEach(function (button) { toolbar.removeContent(button); button.destroy(); });
      this.actionButtons = list.actions.map(function (action) {
        var button = new Button({ id: view.createId("listAction-" + action.name), text: action.label, press: this.onListAction.bind(this, action) });
        toolbar.addContent(button);
        return button;
      }, this);
      if (list.newAction) {
        var create = new Button({ id: view.createId("listCreate"), text: "Create", press: this.onCreate.bind(this) });
        toolbar.addContent(create);
        this.actionButtons.push(create);
      }

      table.unbindItems();
      table.destroyColumns();
      list.columns.forEach(function (property) {
        table.addColumn(new Column({ id: view.createId(fields.idOf("column", property)), header: new Label({ text: property.label, wrapping: true }) }));
      });
      table.bindItems({
        path: "/" + list.set,
        parameters: { $count: true },
        sorter: list.sortOrder.map(function (order) { return new Sorter(order.path, order.descending); }),
        template: new ColumnListItem({
          type: "Navigation",
          press: this.onOpen.bind(this),
          cells: list.columns.map(function (property) { return fields.display(property); })
        }),
        templateShareable: false,
        events: { dataReceived: this.onCounted.bind(this) }
      });
      this.onCounted();
    },

    onCounted: function () {
      var binding = this.byId("table").getBinding("items");
      var count = binding && binding.getCount();
      var title = this.list.header.TypeNamePlural || this.list.set;
      this.byId("tableTitle").setText(count === undefined ? title : title + " (" + count + ")");
    },

    /** Go (or Enter in the search): the filters and the search applied on the server. */
    onGo: function () {
      var binding = this.byId("table").getBinding("items");
      var filters = this.filters.map(function (filter) { return filter.toFilter(); }).filter(Boolean);
      var search = this.byId("search").getValue().trim();
      binding.changeParameters({ $search: search ? "\"" + search.replace(/"/g, "") + "\"" : undefined });
      binding.filter(filters.length ? new Filter({ filters: filters, and: true }) : []);
    },

    onOpen: function (event) {
      var path = event.getSource().getBindingContext().getPath();
      this.getOwnerComponent().getRouter().navTo("object", { set: this.list.set, key: predicateOf(path) });
    },

    /** Create: a new row as a draft (its key asked first), opened to fill in and save. */
    onCreate: function () {
      var view = this.getView();
      var set = this.list.set;
      var annotations = this.getOwnerComponent().annotations();
      var router = this.getOwnerComponent().getRouter();
      var model = view.getModel();
      annotations.parametersOf(this.list.newAction, set).then(function (signature) {
        return operations.askParameters(view, "Create", signature.parameters).then(function (values) {
          if (!values) return;
          var binding = model.bindContext("/" + set + "/OperatorService." + this.list.newAction + "(...)");
          signature.parameters.forEach(function (parameter) {
            var value = fields.parameterValue(parameter, values[parameter.name]);
            if (value !== undefined) binding.setParameter(parameter.name, value);
          });
          return binding.execute().then(function () {
            return Promise.all([binding.getBoundContext().requestObject(), model.getMetaModel().requestObject("/" + set + "/")]);
          }).then(function (found) {
            var draft = found[0];
            var type = found[1];
            var predicate = type.$Key.map(function (key) {
              return key + "=" + ODataUtils.formatLiteral(draft[key], type[key].$Type);
            }).join(",");
            router.navTo("object", { set: set, key: predicate });
          });
        }.bind(this));
      }.bind(this)).catch(function (error) {
        MessageBox.error(error.message, { id: view.createId("errorBox"), title: "Create failed" });
      });
    },

    onListAction: function (action) {
      operations.run(this.getView(), this.getOwnerComponent().annotations(), action, this.list.set, null).then(function (ran) {
        if (ran) this.byId("table").getBinding("items").refresh();
      }.bind(this));
    }
  });
});
