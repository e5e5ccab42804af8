sap.ui.define([
  "sap/base/Log",
  "sap/m/Button",
  "sap/m/Dialog",
  "sap/m/Label",
  "sap/m/MessageBox",
  "sap/m/Text",
  "sap/m/TextArea",
  "sap/ui/layout/form/SimpleForm",
  "sap/ui/model/json/JSONModel",
  "cag/console/model/fields"
], function (Log, Button, Dialog, Label, MessageBox, Text, TextArea, SimpleForm, JSONModel, fields) {
  "use strict";

  /** Asks for an action's parameters in a dialog; resolves with their values, or null when cancelled. */
  function askParameters(view, title, parameters) {
    return new Promise(function (resolve) {
      var values = new JSONModel({});
      var form = new SimpleForm({ editable: true, layout: "ResponsiveGridLayout" });
      var selects = {};
      parameters.forEach(function (parameter) {
        var control = fields.parameter(parameter, view.createId("param-" + parameter.name));
        if (control.getSelectedKey) selects[parameter.name] = control;
        form.addContent(new Label({ text: parameter.label, required: parameter.required }));
        form.addContent(control);
      });
      // A select shows its first value before anyone picks one (its items arrive later than its binding): that value is the one sent.
      var chosen = function () {
        var data = values.getData();
        Object.keys(selects).forEach(function (name) {
          if (!data[name]) data[name] = selects[name].getSelectedKey();
        });
        return data;
      };
      var dialog = new Dialog({
        id: view.createId("actionDialog"),
        title: title,
        contentWidth: "28rem",
        content: [form],
        beginButton: new Button({ id: view.createId("actionConfirm"), text: title, type: "Emphasized", press: function () { var data = chosen(); dialog.close(); resolve(data); } }),
        endButton: new Button({ id: view.createId("actionCancel"), text: "Cancel", press: function () { dialog.close(); resolve(null); } }),
        afterClose: function () { dialog.destroy(); }
      });
      dialog.setModel(values, "params");
      view.addDependent(dialog);
      dialog.open();
    });
  }

  /**
   * Shows what an action answered once (a new key's secret, a batch of voucher codes): each of
   * its simple fields, long text in a read-only area to copy from.
   */
  function showAnswer(view, title, type, answer) {
    var form = new SimpleForm({ editable: false, layout: "ResponsiveGridLayout" });
    Object.keys(type || {}).forEach(function (name) {
      var property = type[name];
      if (name.charAt(0) === "$" || !property || property.$kind !== "Property" || property.$isCollection) return;
      if (answer[name] !== null && typeof answer[name] === "object") return;
      var value = answer[name] === null || answer[name] === undefined ? "" : String(answer[name]);
      form.addContent(new Label({ text: name }));
      // Set through the setters: a value in the constructor's settings would be read as a binding where it holds braces (JSON).
      form.addContent(value.length > 120 || /\n/.test(value)
        ? new TextArea({ id: view.createId("answer-" + name), editable: false, rows: 8, width: "100%" }).setValue(value).addStyleClass("cagConsoleCode")
        : new Text({ id: view.createId("answer-" + name) }).setText(value).addStyleClass("cagConsoleCode"));
    });
    var dialog = new Dialog({
      id: view.createId("answerDialog"),
      title: title + ": shown this once",
      contentWidth: "40rem",
      content: [form],
      endButton: new Button({ id: view.createId("answerClose"), text: "Close", press: function () { dialog.close(); } }),
      afterClose: function () { dialog.destroy(); }
    });
    view.addDependent(dialog);
    dialog.open();
  }

  return {
    askParameters: askParameters,

    /**
     * Runs an action of the operator service as an operator asked for it: its parameters from a
     * dialog, then the call (bound to `context`, or unbound), then its answer shown where it
     * carries more than the row it acted on. Resolves true when the action ran.
     */
    run: function (view, annotations, action, set, context) {
      var model = view.getModel();
      return annotations.parametersOf(action.name, context ? set : null).then(function (signature) {
        var asked = signature.parameters.length ? askParameters(view, action.label, signature.parameters) : Promise.resolve({});
        return asked.then(function (values) {
          if (!values) return false;
          var binding = context
            ? model.bindContext("OperatorService." + action.name + "(...)", context)
            : model.bindContext("/" + action.name + "(...)");
          signature.parameters.forEach(function (parameter) {
            var value = fields.parameterValue(parameter, values[parameter.name]);
            if (value !== undefined) binding.setParameter(parameter.name, value);
          });
          return binding.execute().then(function () {
            var answerType = signature.returnType;
            var sameEntity = context && answerType === context.getModel().getMetaModel().getObject("/" + set + "/$Type");
            if (!answerType || sameEntity) return true;
            return Promise.all([binding.getBoundContext().requestObject(), annotations.typeOf(answerType)]).then(function (found) {
              showAnswer(view, action.label, found[1], found[0]);
              return true;
            });
          });
        });
      }).catch(function (error) {
        Log.warning(action.name + " failed: " + (error.stack || error.message), "", "cag.console");
        MessageBox.error(error.message, { id: view.createId("errorBox"), title: action.label + " failed" });
        return false;
      });
    }
  };
});
