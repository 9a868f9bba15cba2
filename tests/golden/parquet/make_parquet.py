"""make_parquet.py — Parquet test files written by pyarrow.parquet.write_table, as `datasets` and the
Hub write them, for tests/test_parquet.cpp. Each holds the same documents as texts.jsonl (written by
Python's json), so the C++ reader is checked against the writer's own input.

  default.parquet        pyarrow's defaults (snappy), 3 row groups, columns text + id
  zstd.parquet           compression="zstd", 4 row groups
  none.parquet           compression="none", one row group
  large_string.parquet   the text as large_string, 2 row groups
  nulls.parquet          every third text null (its row is skipped; rows keep their numbers)
  content.parquet        the text in a column "content" (no "text": the error lists the columns)
  binary.parquet         the text as binary (refused by name: not a string column)
  dictionary.parquet     the text dictionary-encoded (pa.array(...).dictionary_encode(): pandas' category)
  shards/data/train-0000{0,1}-of-00002.parquet   a dataset's shards, split where `datasets` splits

Regenerate: .venv/bin/python tests/golden/parquet/make_parquet.py (pyarrow from tools/setup.sh).
"""
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

here = Path(__file__).resolve().parent
root = here.parents[2]


def documents():
    # Paragraphs of the embedded corpus (public domain), non-ASCII and empty-line handling included.
    text = (root / "data" / "corpus" / "austen-novels.txt").read_text(encoding="utf-8")
    paras = [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200][:60]
    paras.append("Ünïcödé — “quotes”, emoji 🙂 and a tab\there.")
    return paras


def write_dictionary(docs, ids):
    # Some texts repeated, so the dictionary is shorter than the column; 2 row groups.
    texts = docs + docs[:7]
    pq.write_table(pa.table({"text": pa.array(texts).dictionary_encode(), "id": list(range(len(texts)))}),
                   here / "dictionary.parquet", row_group_size=40)


def main():
    docs = documents()
    ids = list(range(len(docs)))
    with open(here / "texts.jsonl", "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
    t = pa.table({"text": docs, "id": ids})
    pq.write_table(t, here / "default.parquet", row_group_size=25)
    pq.write_table(t, here / "zstd.parquet", compression="zstd", row_group_size=16)
    pq.write_table(t, here / "none.parquet", compression="none")
    pq.write_table(pa.table({"text": pa.array(docs, pa.large_string()), "id": ids}), here / "large_string.parquet",
                   row_group_size=31)
    with_nulls = [None if i % 3 == 2 else d for i, d in enumerate(docs)]
    pq.write_table(pa.table({"text": with_nulls, "id": ids}), here / "nulls.parquet", row_group_size=20)
    pq.write_table(pa.table({"content": docs, "id": ids}), here / "content.parquet")
    pq.write_table(pa.table({"text": pa.array([d.encode() for d in docs], pa.binary())}), here / "binary.parquet")
    write_dictionary(docs, ids)
    shards = here / "shards" / "data"
    shards.mkdir(parents=True, exist_ok=True)
    half = len(docs) // 2
    pq.write_table(t.slice(0, half), shards / "train-00000-of-00002.parquet", row_group_size=10)
    pq.write_table(t.slice(half), shards / "train-00001-of-00002.parquet", row_group_size=10)
    # Where row group 1's text column starts in default.parquet: the test damages it there.
    meta = pq.ParquetFile(here / "default.parquet").metadata
    col = meta.row_group(1).column(0)
    start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
    (here / "README.json").write_text(json.dumps({
        "documents": len(docs), "pyarrow": pa.__version__,
        "default_row_group_1_text_offset": start, "default_row_group_1_text_bytes": col.total_compressed_size,
        "command": ".venv/bin/python tests/golden/parquet/make_parquet.py"}, indent=1) + "\n")


if __name__ == "__main__":
    main()
