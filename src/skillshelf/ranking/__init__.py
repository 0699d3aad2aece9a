"""Ranking skills for a query: BM25, embeddings and their fusion; knows nothing of skills, only documents."""
