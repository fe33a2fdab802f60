// NumPy's WebAssembly libraries, compiled in the background as soon as the wheel is in.
//
// Pyodide asks for NumPy's wheel early, but compiles the wheel's shared libraries
// (numpy/_core/_multiarray_umath.so is 2 MB of WebAssembly) only once Python has started and
// unpacked it: one WebAssembly.instantiate per library, in turn, on the worker's path to its
// first answer. Some engines compile slowly (WebKit's JavaScriptCore takes seconds on two CPUs,
// where V8 takes tens of milliseconds). So the worker hands the wheel's response to
// compileLibrariesOf(), which reads the wheel (a zip), inflates each *.so and compiles them all
// at once in the background; instantiate() then gives Pyodide the compiled module for any
// library whose bytes are exactly the ones compiled. (The response reaches this code once
// Python's start lets go of the worker's thread: docs/hosts.md says what was measured.)
//
// Nothing is trusted that Pyodide did not check: Pyodide verifies the wheel (its sha256 in
// pyodide-lock.json) and reads the libraries from it as before; a module compiled here is used
// only for bytes equal, byte for byte, to the bytes it was compiled from. Any failure here (an
// engine without DecompressionStream("deflate-raw"), a wheel this reader does not understand)
// only means Pyodide compiles the library itself, as it would have.

const compiled = new Map(); // byte length -> [{bytes: Uint8Array, module: Promise<Module>}]
// Byte lengths of the libraries Pyodide began to instantiate before they were compiled here: it
// compiles those itself, so compiling them here too would only take CPU from it.
const taken = new Set();
// How many libraries were compiled early, and how many of them Pyodide was given.
export const libraries = { compiled: 0, used: 0 };

// The zip's stored or deflated members whose names end in ".so", as {name, method, data}.
function sharedLibraries(zip) {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // End of central directory: its signature within the last 64 KiB + 22 bytes.
  let end = -1;
  for (let i = zip.byteLength - 22; i >= Math.max(0, zip.byteLength - 65557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) { end = i; break; }
  }
  if (end < 0) return [];
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const found = [];
  for (let n = 0; n < count && at + 46 <= zip.byteLength; n++) {
    if (view.getUint32(at, true) !== 0x02014b50) break;
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    at += 46 + skip;
    if (!name.endsWith(".so") || (method !== 0 && method !== 8)) continue;
    if (local + 30 > zip.byteLength || view.getUint32(local, true) !== 0x04034b50) continue;
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + size > zip.byteLength) continue;
    found.push({ name, method, data: zip.subarray(start, start + size) });
  }
  return found;
}

async function inflate(member) {
  if (member.method === 0) return member.data;
  const stream = new Blob([member.data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// Reads the wheel from `response` (a clone: the caller's copy goes on to Pyodide untouched) and
// compiles its libraries, all inflated at once; resolves when each is compiling or given up.
export async function compileLibrariesOf(response) {
  let zip;
  try {
    zip = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    return; // nothing compiled early: Pyodide compiles each library when it loads it
  }
  await Promise.all(sharedLibraries(zip).map(async (member) => {
    try {
      const bytes = await inflate(member);
      if (taken.has(bytes.byteLength)) return;
      const module = WebAssembly.compile(bytes);
      module.catch(() => {}); // Pyodide then compiles it, and says what is wrong
      const same = compiled.get(bytes.byteLength) || [];
      same.push({ bytes, module });
      compiled.set(bytes.byteLength, same);
      libraries.compiled += 1;
    } catch (error) {
      // this one is compiled by Pyodide when it loads it
    }
  }));
}

function equal(a, b) {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

// WebAssembly.instantiate, with the module compiled early for bytes that were: the same answer
// ({module, instance}) as the engine's own for those bytes. onLoad(bytes) is called as each
// module given as bytes begins to load (Pyodide's libraries; its own WebAssembly streams in),
// onUse() after each use of an early one.
export function useCompiledLibraries({ onLoad, onUse }) {
  const instantiate = WebAssembly.instantiate;
  // (typed as the engine's: both of its forms, bytes or a Module, are answered as it answers them)
  WebAssembly.instantiate = /** @type {typeof WebAssembly.instantiate} */ (async function (source, imports) {
    const bytes = ArrayBuffer.isView(source)
      ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
      : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
    if (bytes) onLoad(bytes);
    const entry = bytes && (compiled.get(bytes.byteLength) || []).find((e) => equal(e.bytes, bytes));
    if (entry) {
      const same = compiled.get(bytes.byteLength);
      same.splice(same.indexOf(entry), 1); // each library is loaded once: its bytes can go
      const module = await entry.module.catch(() => null);
      if (module) {
        const instance = await instantiate.call(WebAssembly, module, imports);
        libraries.used += 1;
        onUse();
        return { module, instance };
      }
    }
    if (bytes) taken.add(bytes.byteLength);
    return instantiate.call(WebAssembly, source, imports);
  });
}
