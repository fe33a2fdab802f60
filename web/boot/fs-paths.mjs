// Emscripten's PATH.dirname and PATH.basename, without regular expressions. In Firefox, now and
// then, a regular expression in Pyodide's worker fails while PyScript writes the explorer's files
// ("InternalError: too much recursion" from PATH.splitPath, called by PATH.dirname for each
// file, on a path of a few dozen characters; about one cold boot in fifteen), and the page
// cannot start. Both are called for every file written (PATH.basename by every FS.mkdir and
// file creation), so boot/pyodide-worker.mjs puts these in their place once Pyodide is loaded.
// Same results as Emscripten's for every path (tests/test_fs_paths.py).

/** The directory of `path`: "/a/b" for "/a/b/c" and "/a/b/c/", "/" for "/a", "." for "a". */
export function dirname(path) {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--; // trailing slashes (a lone "/" is the root)
  const slash = path.lastIndexOf("/", end - 1);
  if (slash < 0) return ".";
  return slash === 0 ? "/" : path.slice(0, slash);
}

/** The last name in `path`: "c" for "/a/b/c" and "/a/b/c/", "/" for "/"; "" stays "". */
export function basename(path) {
  if (!path) return path;
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  if (end === 0) return "/";
  return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
}

/** Put both in place in Emscripten's PATH object (pyodide._module.PATH). */
export function usePlainPaths(PATH) {
  if (!PATH) return;
  PATH.dirname = dirname;
  PATH.basename = basename;
}
