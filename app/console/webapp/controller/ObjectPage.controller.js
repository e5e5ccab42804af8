sap.ui.define([
  "sap/m/Button",
  "sap/m/Label",
  "sap/m/MessageBox",
  "sap/m/MessageToast",
  "sap/ui/core/Title",
  "sap/ui/core/mvc/Controller",
  "sap/ui/layout/form/SimpleForm",
  "cag/console/model/fields",
  "cag/console/model/operations"
], function (Button, Label, MessageBox, MessageToast, CoreTitle, Controller, SimpleForm, fields, operations) {
  "use strict";

  var SETTLE_MS = 10000;

  /** The same row's predicate as the active row (`IsActiveEntity=true`) or its draft (`false`). */
  function asActive(predicate, active) {
    return predicate.replace(/IsActiveEntity=(true|false)/, "IsActiveEntity=" + active);
  }

  /**
   * An object page of one row, built from its entity set's annotations: the title from
   * UI.HeaderInfo, a section per UI.Facets field group, a button per action in UI.Identification
   * (its parameters asked in a dialog). Rows of draft-enabled sets (plans, prices, packs) are
   * edited as drafts: Edit makes the draft, each field is written to it as it changes, Save
   * activates it (the service checks and audits the change then), Cancel discards it.
   */
  return Controller.extend("cag.console.controller.ObjectPage", {
    onInit: function () {
      this.getOwnerComponent().getRouter().getRoute("object").attachPatternMatched(function (event) {
        var args = event.getParameter("arguments");
        this.show(args.set, args.key);
      }, this);
    },

    show: function (set, predicate) {
      this.set = set;
      this.predicate = predicate;
      this.editing = /IsActiveEntity=false/.test(predicate);
      var view = this.getView();
      // The fields of the row shown before go first: bound to the new row, they would ask it for properties it lacks.
      view.unbindElement();
      this.byId("sections").destroyItems();
      this.getOwnerComponent().annotations().objectOf(set).then(function (object) {
        this.build(object);
        view.bindElement({ path: "/" + set + "(" + predicate + ")" });
      }.bind(this)).catch(function (error) {
        MessageBox.error(error.message, { id: view.createId("errorBox") });
      });
    },

    build: function (object) {
      var view = this.getView();
      this.object = object;
      var header = object.header;
      this.byId("objectTitle").bindProperty("text", { path: header.Title && header.Title.Value ? header.Title.Value.$Path : object.keys[0] });
      var description = header.Description && header.Description.Value && header.Description.Value.$Path;
      if (description) this.byId("objectSubtitle").bindProperty("text", { path: description });
      else this.byId("objectSubtitle").unbindProperty("text");

      this.byId("editButton").setVisible(object.draft && !this.editing);
      this.byId("saveButton").setVisible(this.editing);
      this.byId("cancelButton").setVisible(this.editing);
      this.byId("draftStatus").setVisible(this.editing);

      var sections = this.byId("sections");
      sections.destroyItems();
      object.sections.forEach(function (section) {
        var form = new SimpleForm({ id: view.createId("section-" + section.id), editable: this.editing, layout: "ResponsiveGridLayout", labelSpanL: 3, labelSpanM: 4, columnsL: 1 });
        form.addContent(new CoreTitle({ text: section.label }));
        section.properties.forEach(function (property) {
          var id = view.createId(fields.idOf("field", property));
          var editable = this.editing && !property.key && !property.readOnly;
          var control = editable ? fields.edit(property, id) : fields.display(property, id);
          form.addContent(new Label({ text: property.label, labelFor: control }));
          form.addContent(control);
        }, this);
        sections.addItem(form);
      }, this);

      var toolbar = this.byId("objectToolbar");
      (this.actionButtons || []).forEach(function (button) { toolbar.removeContent(button); button.destroy(); });
      this.actionButtons = object.actions.map(function (action) {
        var button = new Button({ id: view.createId("action-" + action.name), text: action.label, press: this.onAction.bind(this, action) });
        toolbar.insertContent(button, toolbar.indexOfContent(this.byId("editButton")));
        return button;
      }, this);
    },

    context: function () {
      return this.getView().getBindingContext();
    },

    open: function (predicate) {
      this.getOwnerComponent().getRouter().navTo("object", { set: this.set, key: predicate }, true);
    },

    onBack: function () {
      this.getOwnerComponent().getRouter().navTo("list", { set: this.set });
    },

    onAction: function (action) {
      var context = this.context();
      operations.run(this.getView(), this.getOwnerComponent().annotations(), action, this.set, context).then(function (ran) {
        if (!ran) return;
        MessageToast.show(action.label + ": done");
        this.getView().getElementBinding().refresh();
      }.bind(this));
    },

    /** Edit: a draft of the row (or the operator's own draft of it, where one is open already). */
    onEdit: function () {
      var draft = asActive(this.predicate, false);
      var binding = this.getView().getModel().bindContext("OperatorService.draftEdit(...)", this.context());
      binding.setParameter("PreserveChanges", true);
      binding.execute().then(function () {
        this.open(draft);
      }.bind(this), function (error) {
        if (error.status === 409) return this.open(draft);
        MessageBox.error(error.message, { id: this.getView().createId("errorBox"), title: "Edit failed" });
      }.bind(this));
    },

    /** Save: once every change reached the draft, the draft is activated; a refusal leaves the draft open to correct. */
    onSave: function () {
      var model = this.getView().getModel();
      var context = this.context();
      var giveUpAt = Date.now() + SETTLE_MS;
      var settled = function () {
        return new Promise(function (resolve) {
          (function check() {
            if (!model.hasPendingChanges() || Date.now() > giveUpAt) resolve();
            else setTimeout(check, 50);
          })();
        });
      };
      settled().then(function () {
        var binding = model.bindContext("OperatorService.draftActivate(...)", context);
        return binding.execute();
      }).then(function () {
        MessageToast.show("Saved");
        this.open(asActive(this.predicate, true));
      }.bind(this), function (error) {
        MessageBox.error(error.message, { id: this.getView().createId("errorBox"), title: "Not saved" });
      }.bind(this));
    },

    /** Cancel: the draft is discarded; the row stays as it was (a new row's draft leaves nothing: back to the list). */
    onCancel: function () {
      var context = this.context();
      context.requestProperty("HasActiveEntity").then(function (hasActive) {
        return context.delete().then(function () {
          if (hasActive) this.open(asActive(this.predicate, true));
          else this.onBack();
        }.bind(this));
      }.bind(this)).catch(function (error) {
        MessageBox.error(error.message, { id: this.getView().createId("errorBox"), title: "Cancel failed" });
      }.bind(this));
    }
  });
});
