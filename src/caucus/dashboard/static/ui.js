// The one place the vendored libraries are imported from (see vendor/VENDORED.json).
import { h, render } from "./vendor/preact.module.js";
import htm from "./vendor/htm.module.js";

export { render };
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
