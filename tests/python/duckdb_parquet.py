"""Parquet files written by DuckDB itself, through ctypes on a libduckdb.so: an implementation
independent of shardkit's reader, and no Python package beyond the standard library."""
import ctypes


def write_parquet(libduckdb, jsonl, parquet, columns="*", compression="snappy"):
    """The rows of a JSONL file as a Parquet file."""
    lib = ctypes.CDLL(libduckdb)
    db, conn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.duckdb_open(None, ctypes.byref(db)) == 0
    assert lib.duckdb_connect(db, ctypes.byref(conn)) == 0
    result = ctypes.create_string_buffer(256)  # duckdb_result is smaller
    sql = (f"COPY (SELECT {columns} FROM read_json('{jsonl}', format='newline_delimited')) "
           f"TO '{parquet}' (FORMAT parquet, COMPRESSION {compression})")
    ok = lib.duckdb_query(conn, sql.encode(), result) == 0
    lib.duckdb_result_error.restype = ctypes.c_char_p
    error = None if ok else lib.duckdb_result_error(result)
    lib.duckdb_destroy_result(result)
    lib.duckdb_disconnect(ctypes.byref(conn))
    lib.duckdb_close(ctypes.byref(db))
    assert ok, error
