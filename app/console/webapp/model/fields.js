sap.ui.define([
  "sap/m/CheckBox",
  "sap/m/ComboBox",
  "sap/m/DatePicker",
  "sap/m/DateTimePicker",
  "sap/m/Input",
  "sap/m/Select",
  "sap/m/Text",
  "sap/ui/core/Item",
  "sap/ui/model/Filter",
  "sap/ui/model/FilterOperator"
], function (CheckBox, ComboBox, DatePicker, DateTimePicker, Input, Select, Text, Item, Filter, FilterOperator) {
  "use strict";

  var WHOLE_NUMBERS = ["Edm.Byte", "Edm.SByte", "Edm.Int16", "Edm.Int32"];
  var NUMBERS = WHOLE_NUMBERS.concat(["Edm.Int64", "Edm.Decimal", "Edm.Double"]);
  var TIMES = ["Edm.Date", "Edm.DateTimeOffset"];

  /** The items of a value list: its entity set's rows, keyed by the property written back. */
  function valueListItems(valueList) {
    return {
      path: "/" + valueList.collection,
      template: new Item({ key: "{" + valueList.key + "}", text: "{" + valueList.key + "}" }),
      templateShareable: false
    };
  }

  /** Ids the browser tests (and people using assistive tools) find: the set, the property and what the control is for. */
  function idOf(prefix, property) {
    return prefix + "-" + property.path.replace(/\W/g, "_");
  }

  return {
    idOf: idOf,

    /** A property shown as text, formatted by its type (the OData V4 model picks it from the metadata). */
    display: function (property, id) {
      // A type of the service's own (a TypeDefinition such as Units) has no UI5 type: shown as the service sends it.
      var own = property.type && property.type.indexOf("Edm.") !== 0;
      var text = new Text({ id: id, text: { path: property.path, targetType: own ? "any" : undefined }, wrapping: true });
      // Ids and hashes in a monospaced font, to compare them by eye.
      if (/ID$|hash$/i.test(property.path)) text.addStyleClass("cagConsoleCode");
      return text;
    },

    /** A property edited in a draft: a select of its value list, a checkbox, or an input; written back to the draft as it changes. */
    edit: function (property, id) {
      if (property.valueList) return new Select({ id: id, selectedKey: "{" + property.path + "}", items: valueListItems(property.valueList), width: "100%" });
      if (property.type === "Edm.Boolean") return new CheckBox({ id: id, selected: "{" + property.path + "}" });
      return new Input({ id: id, value: "{" + property.path + "}", type: NUMBERS.indexOf(property.type) >= 0 ? "Number" : "Text" });
    },

    /**
     * A filter field of a list: the control and how its value becomes an OData filter (strings
     * contain the text, times are from the day chosen on, the rest equal the value).
     */
    filter: function (property, id) {
      var control;
      var read;
      if (property.valueList) {
        control = new ComboBox({ id: id, items: valueListItems(property.valueList), width: "12rem" });
        read = function () { return control.getSelectedKey() || control.getValue(); };
      } else if (property.type === "Edm.Boolean") {
        control = new Select({ id: id, width: "8rem", items: [new Item({ key: "", text: "" }), new Item({ key: "true", text: "Yes" }), new Item({ key: "false", text: "No" })] });
        read = function () { return control.getSelectedKey(); };
      } else if (TIMES.indexOf(property.type) >= 0) {
        control = new DatePicker({ id: id, valueFormat: "yyyy-MM-dd", placeholder: "from", width: "10rem" });
        read = function () { return control.getValue(); };
      } else {
        control = new Input({ id: id, width: "14rem", type: NUMBERS.indexOf(property.type) >= 0 ? "Number" : "Text" });
        read = function () { return control.getValue().trim(); };
      }
      return {
        property: property,
        control: control,
        toFilter: function () {
          var value = read();
          if (!value) return null;
          if (property.type === "Edm.Boolean") return new Filter(property.path, FilterOperator.EQ, value === "true");
          if (property.type === "Edm.DateTimeOffset") return new Filter(property.path, FilterOperator.GE, value + "T00:00:00Z");
          if (property.type === "Edm.Date") return new Filter(property.path, FilterOperator.GE, value);
          if (property.type === "Edm.String" && !property.valueList) return new Filter({ path: property.path, operator: FilterOperator.Contains, value1: value, caseSensitive: false });
          if (WHOLE_NUMBERS.indexOf(property.type) >= 0) return new Filter(property.path, FilterOperator.EQ, Number(value));
          return new Filter(property.path, FilterOperator.EQ, value);
        }
      };
    },

    /** An action parameter's field in its dialog, bound to `/<name>` of the dialog's own model. */
    parameter: function (parameter, id) {
      var path = "params>/" + parameter.name;
      if (parameter.valueList) return new Select({ id: id, selectedKey: "{" + path + "}", forceSelection: parameter.required, items: valueListItems(parameter.valueList), width: "100%" });
      if (parameter.type === "Edm.Boolean") return new CheckBox({ id: id, selected: "{" + path + "}" });
      if (parameter.type === "Edm.DateTimeOffset") return new DateTimePicker({ id: id, value: "{" + path + "}", valueFormat: "yyyy-MM-dd'T'HH:mm:ssXXX", width: "100%" });
      return new Input({ id: id, value: "{" + path + "}", required: parameter.required, type: NUMBERS.indexOf(parameter.type) >= 0 ? "Number" : "Text" });
    },

    /** A parameter's value as the service takes it: whole numbers as numbers, 64-bit ones as text, empty as absent. */
    parameterValue: function (parameter, value) {
      if (value === undefined || value === null || value === "") return undefined;
      if (WHOLE_NUMBERS.indexOf(parameter.type) >= 0) return Number(value);
      if (parameter.type === "Edm.DateTimeOffset") return new Date(value).toISOString();
      if (parameter.type === "Edm.Boolean") return !!value;
      return String(value);
    }
  };
});
