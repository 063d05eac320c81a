//go:build winetest

package wine_test

import _ "github.com/cloudstic/cloudstic/test/winetest" // Wine 8's missing delete call
