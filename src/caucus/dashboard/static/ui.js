// The one place the vendored libraries are imported from (see vendor/VENDORED.json).
import { Component, h, render } from "./vendor/preact.module.js";
import htm from "./vendor/htm.module.js";

export { Component, render };
export {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useReducer,
  useRef,
  useState,
} from "./vendor/hooks.module.js";
export const html = htm.bind(h);
