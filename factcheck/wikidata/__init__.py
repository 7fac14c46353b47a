"""Reading Wikidata statements: the typed values an entity's statements hold (times, quantities, items),
read from the API's JSON and compared with what a claim states, each comparison ending in a match, a
clash or "unknown" (:mod:`factcheck.wikidata.values`)."""
