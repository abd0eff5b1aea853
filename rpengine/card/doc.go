// Package card parses, validates, repairs, hashes and patches Character
// Card V2 documents, and plans how each card travels to RPEngine.
package card
