// Boots the UI5 core once the loader and its configuration are in (what sap-ui-core.js does with an
// inline script, which the content security policy forbids).
sap.ui.require(["sap/ui/core/Core"], function (Core) {
  "use strict";
  if (typeof Core.boot === "function") Core.boot();
});
