sap.ui.define([], function () {
  "use strict";

  var UI = "@com.sap.vocabularies.UI.v1.";
  var COMMON = "@com.sap.vocabularies.Common.v1.";

  /** An annotation path as the model writes it (`@UI.FieldGroup#Key`), with the vocabulary's full name. */
  function fullTerm(path) {
    return path.replace(/^@UI\./, UI).replace(/^@Common\./, COMMON);
  }

  /** The last segment of a qualified name: `OperatorService.credit` is `credit`. */
  function localName(name) {
    return name.slice(name.lastIndexOf(".") + 1);
  }

  /**
   * What the console reads from the operator service's metadata (annotations.cds): which entity
   * sets are listed, and for each its filter fields, columns, header, sections and actions, the
   * labels and types of its properties, and the value lists of properties and action parameters.
   */
  function Annotations(metaModel) {
    this.metaModel = metaModel;
  }

  Annotations.prototype = {
    /** The entity sets a person lists (those with fields to filter by), in the service's order, with their plural names. */
    listedSets: function () {
      var metaModel = this.metaModel;
      return metaModel.requestObject("/").then(function (container) {
        var names = Object.keys(container).filter(function (name) { return container[name] && container[name].$kind === "EntitySet"; });
        return Promise.all(names.map(function (name) {
          return Promise.all([metaModel.requestObject("/" + name + "/" + UI + "SelectionFields"), metaModel.requestObject("/" + name + "/" + UI + "HeaderInfo")])
            .then(function (found) { return found[0] ? { name: name, title: (found[1] && found[1].TypeNamePlural) || name } : null; });
        }));
      }).then(function (sets) { return sets.filter(Boolean); });
    },

    /** Everything a list report of `set` is built from. */
    listOf: function (set) {
      var self = this;
      var base = "/" + set;
      return Promise.all([
        this.metaModel.requestObject(base + "/" + UI + "SelectionFields"),
        this.metaModel.requestObject(base + "/" + UI + "LineItem"),
        this.metaModel.requestObject(base + "/" + UI + "HeaderInfo"),
        this.metaModel.requestObject(base + "/" + UI + "PresentationVariant"),
        this.metaModel.requestObject(base + "/"),
        this.metaModel.requestObject(base + COMMON + "DraftRoot"),
        this.metaModel.requestObject(base + "/" + UI + "CreateHidden")
      ]).then(function (found) {
        var lineItem = found[1] || [];
        var columns = lineItem.filter(function (field) { return field.Value && field.Value.$Path; }).map(function (field) { return field.Value.$Path; });
        var filters = (found[0] || []).map(function (field) { return field.$PropertyPath; });
        var sortOrder = ((found[3] && found[3].SortOrder) || []).map(function (order) { return { path: order.Property.$PropertyPath, descending: !!order.Descending }; });
        var listActions = lineItem.filter(function (field) { return /DataFieldForAction$/.test(field.$Type) && /EntityContainer\//.test(field.Action); })
          .map(function (field) { return { name: field.Action.split("/")[1], label: field.Label }; });
        return Promise.all([self.propertiesOf(set, columns), self.propertiesOf(set, filters)]).then(function (properties) {
          return {
            set: set, header: found[2] || {}, columns: properties[0], filters: properties[1], sortOrder: sortOrder, actions: listActions,
            draft: !!found[4].IsActiveEntity,
            // A new row starts as a draft from the set's new action, unless the annotations hide creating (UI.CreateHidden).
            newAction: found[5] && found[5].NewAction && !found[6] ? localName(found[5].NewAction) : null
          };
        });
      });
    },

    /** Everything an object page of `set` is built from: header, sections (facets of field groups) and bound actions. */
    objectOf: function (set) {
      var self = this;
      var base = "/" + set;
      return Promise.all([
        this.metaModel.requestObject(base + "/" + UI + "HeaderInfo"),
        this.metaModel.requestObject(base + "/" + UI + "Facets"),
        this.metaModel.requestObject(base + "/" + UI + "Identification"),
        this.metaModel.requestObject(base + "/")
      ]).then(function (found) {
        var type = found[3];
        var facets = (found[1] || []).filter(function (facet) { return facet.Target && facet.Target.$AnnotationPath; });
        return Promise.all(facets.map(function (facet) {
          return self.metaModel.requestObject(base + "/" + fullTerm(facet.Target.$AnnotationPath)).then(function (group) {
            var paths = ((group && group.Data) || []).filter(function (field) { return field.Value && field.Value.$Path; }).map(function (field) { return field.Value.$Path; });
            return self.propertiesOf(set, paths).then(function (properties) { return { id: facet.ID, label: facet.Label, properties: properties }; });
          });
        })).then(function (sections) {
          var actions = (found[2] || []).filter(function (field) { return /DataFieldForAction$/.test(field.$Type); })
            .map(function (field) { return { name: localName(field.Action), qualified: field.Action, label: field.Label }; });
          return {
            set: set, header: found[0] || {}, sections: sections, actions: actions, keys: type.$Key || [], draft: !!type.IsActiveEntity
          };
        });
      });
    },

    /** Each path's label, EDM type, whether it is a key, read-only, and its value list. */
    propertiesOf: function (set, paths) {
      var metaModel = this.metaModel;
      return metaModel.requestObject("/" + set + "/").then(function (type) {
        var keys = type.$Key || [];
        return Promise.all(paths.map(function (path) {
          var base = "/" + set + "/" + path;
          return Promise.all([
            metaModel.requestObject(base + "/$Type"),
            metaModel.requestObject(base + COMMON + "Label"),
            metaModel.requestObject(base + COMMON + "ValueList"),
            metaModel.requestObject(base + "@Org.OData.Core.V1.Computed"),
            metaModel.requestObject(base + "@Org.OData.Core.V1.Immutable")
          ]).then(function (found) {
            return {
              path: path, type: found[0], label: found[1] || path, valueList: valueListOf(found[2], path),
              key: keys.indexOf(path) >= 0, readOnly: !!found[3] || !!found[4]
            };
          });
        }));
      });
    },

    /**
     * An action's parameters (the binding parameter left out), with labels, types and value lists:
     * bound to `set` (`credit` on Keys), or unbound (`issueKey`, called from a list).
     */
    parametersOf: function (action, set) {
      var metaModel = this.metaModel;
      var qualified = "OperatorService." + action;
      // A bound action's parameters are reached through its entity set, an unbound one's through its action import.
      var base = set ? "/" + set + "/" + qualified : "/" + action;
      return Promise.all([
        metaModel.requestObject("/" + qualified),
        set ? metaModel.requestObject("/" + set + "/$Type") : null
      ]).then(function (found) {
        var typeName = found[1];
        var overload = (found[0] || []).filter(function (candidate) {
          return typeName ? candidate.$IsBound && candidate.$Parameter[0].$Type === typeName : !candidate.$IsBound;
        })[0];
        if (!overload) throw new Error("The service has no action " + action + (set ? " on " + set : ""));
        var parameters = (overload.$Parameter || []).slice(overload.$IsBound ? 1 : 0);
        return Promise.all(parameters.map(function (parameter) {
          var annotated = base + "/$Parameter/" + parameter.$Name;
          return Promise.all([
            metaModel.requestObject(annotated + COMMON + "Label"),
            metaModel.requestObject(annotated + COMMON + "ValueList"),
            // A parameter named as a property of the set (a new row's key) takes the property's label where it has none.
            set ? metaModel.requestObject("/" + set + "/" + parameter.$Name + COMMON + "Label") : null
          ]).then(function (annotations) {
            return {
              name: parameter.$Name, type: parameter.$Type, required: parameter.$Nullable === false,
              label: annotations[0] || annotations[2] || parameter.$Name, valueList: valueListOf(annotations[1], parameter.$Name)
            };
          });
        })).then(function (described) {
          return { returnType: overload.$ReturnType && overload.$ReturnType.$Type, parameters: described };
        });
      });
    },

    /** The properties of a structured type (an action's answer): their names, types and labels. */
    typeOf: function (qualifiedName) {
      return this.metaModel.requestObject("/" + qualifiedName);
    }
  };

  /** A value list reduced to what a select needs: the entity set, the property written back and the one shown beside it. */
  function valueListOf(valueList, localProperty) {
    if (!valueList || !valueList.CollectionPath) return null;
    var parameters = valueList.Parameters || [];
    var inOut = parameters.filter(function (parameter) {
      return /ValueListParameterInOut$|ValueListParameterOut$/.test(parameter.$Type) && (!parameter.LocalDataProperty || parameter.LocalDataProperty.$PropertyPath === localProperty);
    })[0];
    var shown = parameters.filter(function (parameter) { return /ValueListParameterDisplayOnly$/.test(parameter.$Type); })[0];
    return inOut ? { collection: valueList.CollectionPath, key: inOut.ValueListProperty, text: shown ? shown.ValueListProperty : null } : null;
  }

  return Annotations;
});
