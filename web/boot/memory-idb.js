// An in-memory stand-in for IndexedDB, for PyScript only (PyScript host).
//
// PyScript opens IndexedDB while it starts, even with packages_cache "never" (it caches nothing,
// but still opens its package cache, and its fs plugin opens another database when core.js
// loads). Where the browser denies storage, as in a cross-site iframe with third-party storage
// blocked (a course website embedding the page), opening fails and PyScript stops with
// "Failed to execute 'dispatchEvent'"; under a top page without an origin it never answers and
// PyScript waits forever. The explorer stores nothing in the browser, so PyScript is given a
// database that lives in memory: the few calls it makes (open, one object store, get / put /
// delete / clear / count / getKey / getAllKeys, close) answer asynchronously, like IndexedDB.

function request(result) {
  const req = { result: undefined, error: null, onsuccess: null, onerror: null, readyState: "pending" };
  // The caller assigns its handlers right after the call returns: answer after that.
  queueMicrotask(() => {
    req.result = result;
    req.readyState = "done";
    if (typeof req.onsuccess === "function") req.onsuccess({ type: "success", target: req });
  });
  return req;
}

class MemoryStore {
  constructor(map) { this.map = map; }
  count() { return request(this.map.size); }
  clear() { this.map.clear(); return request(undefined); }
  delete(key) { this.map.delete(key); return request(undefined); }
  get(key) { return request(this.map.get(key)); }
  getKey(key) { return request(this.map.has(key) ? key : undefined); }
  getAllKeys() { return request([...this.map.keys()]); }
  getAll() { return request([...this.map.values()]); }
  put(value, key) { this.map.set(key, value); return request(key); }
}

class MemoryDatabase {
  constructor(name, stores) {
    this.name = name;
    this.stores = stores; // store name -> Map
  }
  get objectStoreNames() { return [...this.stores.keys()]; }
  createObjectStore(name) {
    if (!this.stores.has(name)) this.stores.set(name, new Map());
    return new MemoryStore(this.stores.get(name));
  }
  transaction(names) {
    const db = this;
    const tx = {
      oncomplete: null,
      objectStore(name) { return db.createObjectStore(name); },
    };
    queueMicrotask(() => { if (typeof tx.oncomplete === "function") tx.oncomplete({ type: "complete", target: tx }); });
    return tx;
  }
  close() {}
}

function memoryIndexedDB() {
  const databases = new Map();
  return {
    open(name) {
      if (!databases.has(name)) databases.set(name, new Map());
      return request(new MemoryDatabase(name, databases.get(name)));
    },
    deleteDatabase(name) {
      databases.delete(name);
      return request(undefined);
    },
  };
}

// Replaces `indexedDB` in this window or worker (the explorer itself never uses it).
export function installMemoryIndexedDB(scope = globalThis) {
  Object.defineProperty(scope, "indexedDB", { value: memoryIndexedDB(), configurable: true, writable: true });
}
